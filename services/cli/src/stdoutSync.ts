import { writeSync } from 'node:fs';

/** Standard output's reader went away (a pipe closed, as `| head` closes it): nothing more can be written. */
export class OutputClosed extends Error {}

// what Atomics.wait sleeps on while a pipe is full
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes text to standard output at once, waiting while a pipe is full. A command that writes as it
 * computes without yielding (`simulate`) must not write through `process.stdout`: on a pipe that is
 * a socket whose writes queue until the event loop runs, and `muster simulate | tail -1` held its
 * whole output (31 MB of a 10,000-job trace) in memory. A closed pipe throws `OutputClosed`.
 */
export function writeStdoutSync(text: string): void {
  const bytes = Buffer.from(text);
  let at = 0;
  while (at < bytes.length) {
    try {
      at += writeSync(1, bytes, at);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') throw new OutputClosed('standard output was closed', { cause: err });
      if (code !== 'EAGAIN') throw err;
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}
