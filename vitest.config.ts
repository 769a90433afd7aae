import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Tests read the packages' TypeScript sources (the "source" export condition of every @muster/*
// package), through vite and, in threads Node.js itself resolves for (the audit's worker), through
// --conditions=source; processes they spawn (the `muster` command, scheduler replicas) run dist/.
const conditions = ['source', 'module', 'node', 'development|production'];

// A file whose assertion is about CPU time itself (a leader keeps a 200 ms lease through sessions
// longer than it): it runs last, alone. The drills, which mostly wait on a steady workload, run
// beside other files (their takeover bounds held at three workers on the loaded machine).
const ALONE = ['test/scheduler/longSession.test.ts'];
// Files of the pure core (no process, no NATS, no environment, no timers: the determinism rule):
// they share their workers' modules instead of loading the core afresh for each file, which took
// longer than their tests (libs/core/src alone: 25 s isolated, 10 s shared, on a loaded machine).
const SHARED = ['libs/core/src/**/*.test.ts', 'test/scenarios/**/*.test.ts'];
// one file more than there are cores (see the parallel project); MUSTER_TEST_WORKERS overrides
const WORKERS = Number(process.env.MUSTER_TEST_WORKERS ?? availableParallelism() + 1);

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', 'json'],
    outputFile: { json: '.ci/results.json' },
    pool: 'forks',
    execArgv: ['--conditions=source'],
    projects: [
      {
        extends: true,
        test: {
          name: 'parallel',
          include: ['libs/*/src/**/*.test.ts', 'services/*/src/**/*.test.ts', 'tools/*/src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...ALONE, ...SHARED],
          // Most files wait (on nats-server, spawned replicas, leases) rather than compute: one file
          // more than there are cores keeps the cores busy (vitest's default, cores - 1, ran one file
          // at a time on the two-core machines here).
          maxWorkers: WORKERS,
        },
      },
      {
        extends: true,
        test: { name: 'shared', include: SHARED, isolate: false, maxWorkers: WORKERS },
      },
      {
        extends: true,
        test: { name: 'alone', include: ALONE, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
