import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The repository's root folder, found from this package's location (never from the working directory). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The scheduler replica's entry point (`muster scheduler` runs the same replica). */
export const SCHEDULER_ENTRY = fileURLToPath(new URL('../../../services/scheduler/src/main.ts', import.meta.url));

/** The `muster` command's entry point. */
export const CLI_ENTRY = fileURLToPath(new URL('../../../services/cli/bin/muster.js', import.meta.url));

/** The `--import` argument that lets Node.js run TypeScript through tsx, whatever the working directory. */
export function tsxImport(): string {
  return pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
}
