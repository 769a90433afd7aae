// `muster simulate` writes its lines as the run makes them, at once, waiting while a pipe is full:
// through process.stdout (a socket on a pipe, whose writes queue until the event loop runs) a run
// that never yields held its whole output in memory when piped (`| tail -1`: 455 MB peak against
// 310 MB to a file on the 10,000-job trace). A reader slower than the run gets every byte, in
// order; a reader that goes away (`| head`) ends the run at once, exit 0, nothing on stderr.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMuster, spawnMuster } from './runMuster.ts';

const dir = mkdtempSync(join(tmpdir(), 'muster-sim-out-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const trace = join(dir, 'lublin.swf');
const args = ['simulate', '--swf', trace, '--limit', '1500', '--policy', '{"reserveDepth":1}'];

beforeAll(() => {
  writeFileSync(trace, execFileSync(process.execPath, [new URL('../../scripts/generate-lublin-swf.mjs', import.meta.url).pathname]));
});

describe('muster simulate on a pipe', () => {
  it('gives a reader that stops for a while every line, the same bytes as one that keeps up', async () => {
    const fast = await runMuster(args);
    expect(fast.code).toBe(0);
    // more than a pipe holds (64 KiB), so the run must wait for the reader
    expect(fast.stdout.length).toBeGreaterThan(1 << 20);
    const slow = spawnMuster(args);
    slow.child.stdout!.pause();
    // the pipe fills: the run's writes wait until the reader comes back (they block, or, on a
    // standard output opened non-blocking, are tried again after EAGAIN)
    await new Promise((r) => setTimeout(r, 1_500));
    slow.child.stdout!.resume();
    const run = await slow.exited;
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(fast.stdout);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toMatch(/^\{"type":"Summary"/);
  }, 120_000);

  it('ends at once, exit 0 and nothing on stderr, when its reader goes away', async () => {
    const full = await runMuster(args);
    const head = spawnMuster(args);
    head.child.stdout!.once('data', () => head.child.stdout!.destroy());
    const run = await head.exited;
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout.length).toBeLessThan(full.stdout.length / 10);
  }, 120_000);
});

describe('the synchronous writer on a non-blocking pipe', () => {
  it('waits out EAGAIN while the reader stops, and loses or reorders nothing', async () => {
    // process.stdout touched first: on a pipe that makes fd 1 non-blocking, so a full pipe answers EAGAIN
    const writer = new URL('../../services/cli/dist/stdoutSync.js', import.meta.url).href;
    const script = `void process.stdout.writable; const { writeStdoutSync } = await import(${JSON.stringify(writer)}); for (let i = 0; i < 64; i++) writeStdoutSync(String(i).padStart(8, '0').repeat(8192) + '\\n');`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.pause();
    await new Promise((r) => setTimeout(r, 1_000));
    child.stdout.resume();
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = Buffer.concat(chunks).toString().trimEnd().split('\n');
    expect(lines).toHaveLength(64);
    lines.forEach((l, i) => expect(l).toBe(String(i).padStart(8, '0').repeat(8192)));
  }, 60_000);
});
