// `muster --help` and every subcommand load only what they use: the overview loads the command
// definitions and nothing of the scheduler, the drill, NATS, zod or pino; a subcommand's help loads
// its own definition and no other. Measured by the modules Node.js loads (a module hook that names
// each one on stderr), not by a clock: docs/benchmarks.md has the timing.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { runMuster } from './runMuster.ts';

const MARK = 'muster-loaded ';
// what no help page needs: the packages that do the work, and the heavy libraries under them
const HEAVY = [
  /\/libs\/(core|bus|client|stack)\//,
  // (the scheduler's table of flags, which `muster scheduler --help` prints, is not its code)
  /\/services\/(scheduler|agent|auditor|ui)\/(?!dist\/schedulerFlags\.js$)/,
  /\/tools\/drill\//,
  /\/node_modules\/(zod|pino|immer|@nats-io)\//,
];
let register: string;

beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'muster-startup-'));
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(hooks, `export async function load(url, context, next) {\n  if (url.startsWith('file:')) process._rawDebug(${JSON.stringify(MARK)} + url);\n  return next(url, context);\n}\n`);
  register = join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
});

/** The files `muster args…` loads, with its exit code. */
async function loaded(args: string[]): Promise<{ code: number | null; files: string[] }> {
  const run = await runMuster(args, { env: { NODE_OPTIONS: `--import=${register}` } });
  const files = run.stderr.split('\n').filter((l) => l.startsWith(MARK)).map((l) => l.slice(MARK.length));
  return { code: run.code, files };
}

const heavy = (files: string[]): string[] => files.filter((f) => HEAVY.some((re) => re.test(f)));
const commandModules = (files: string[]): string[] => files.filter((f) => f.includes('/services/cli/dist/commands/')).map((f) => f.replace(/.*\/commands\//, ''));

describe('muster starts with only what it uses', () => {
  it('--help loads no scheduler, drill, NATS, zod or pino', async () => {
    const { code, files } = await loaded(['--help']);
    expect(code).toBe(0);
    expect(files.some((f) => f.endsWith('/services/cli/dist/main.js'))).toBe(true);
    expect(heavy(files)).toEqual([]);
  });

  it.each([
    ['jobs', ['jobs.js']],
    ['drill', ['drill.js']],
    ['scheduler', ['scheduler.js']],
    ['audit', ['audit.js']],
    ['queue', ['queue.js']],
  ])('%s --help loads its own definition and no other, and nothing heavy', async (name, own) => {
    const { code, files } = await loaded([name, '--help']);
    expect(code).toBe(0);
    expect(commandModules(files)).toEqual(own);
    expect(heavy(files)).toEqual([]);
  });

  it('a command that runs loads what it uses: simulate loads the core', async () => {
    const { files } = await loaded(['simulate', 'examples/scenarios/basic.json']);
    expect(files.some((f) => /\/libs\/core\//.test(f))).toBe(true);
    expect(files.some((f) => /\/tools\/drill\/|\/services\/scheduler\//.test(f))).toBe(false);
  });
});
