import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The repository's root folder, found from this package's location (never from the working directory). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const require = createRequire(import.meta.url);

/**
 * The scheduler replica's program (`muster scheduler` runs the same replica): the built JavaScript
 * of @muster/scheduler's `./main` export, found through the package, so a replica starts without
 * compiling anything.
 */
export function schedulerEntry(): string {
  return built('@muster/scheduler/main');
}

/**
 * The `muster` command's program (`./bin` of @muster/cli), which agents run as `muster agent`. The
 * command line is found as a program at run time, not imported: @muster/cli depends on this package.
 */
export function cliEntry(): string {
  return built('@muster/cli/bin');
}

function built(specifier: string): string {
  try {
    return require.resolve(specifier);
  } catch (err) {
    throw new Error(`${specifier} is not built: run \`npm run build\` (tsc -b) at ${REPO_ROOT} (${(err as Error).message.split('\n')[0]})`, { cause: err });
  }
}
