import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Tests read the packages' TypeScript sources (the "source" export condition of every @muster/*
// package), through vite and, in threads Node.js itself resolves for (the audit's worker), through
// --conditions=source; processes they spawn (the `muster` command, scheduler replicas) run dist/.
const conditions = ['source', 'module', 'node', 'development|production'];

// Files whose assertions are about time under load (a lease of 200 ms kept through long sessions,
// takeover bounds in the drills): they run last, one at a time, with nothing else on the machine.
const ALONE = ['test/drill/**/*.test.ts', 'test/scheduler/longSession.test.ts'];

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
          exclude: ['**/node_modules/**', ...ALONE],
          // Most files wait (on nats-server, spawned replicas, leases) rather than compute: one file
          // more than there are cores keeps the cores busy (vitest's default, cores - 1, ran one file
          // at a time on the two-core machines here). MUSTER_TEST_WORKERS overrides.
          maxWorkers: Number(process.env.MUSTER_TEST_WORKERS ?? availableParallelism() + 1),
        },
      },
      {
        extends: true,
        test: { name: 'alone', include: ALONE, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
