import { defineConfig } from 'vitest/config';

// Tests read the packages' TypeScript sources (the "source" export condition of every @muster/*
// package), through vite and, in threads Node.js itself resolves for (the audit's worker), through
// --conditions=source; processes they spawn (the `muster` command, scheduler replicas) run dist/.
const conditions = ['source', 'module', 'node', 'development|production'];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ['libs/*/src/**/*.test.ts', 'services/*/src/**/*.test.ts', 'tools/*/src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', 'json'],
    outputFile: { json: '.ci/results.json' },
    pool: 'forks',
    execArgv: ['--conditions=source'],
  },
});
