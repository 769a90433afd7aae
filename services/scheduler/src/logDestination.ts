import pino from 'pino';
import type { DestinationStream } from 'pino';

// what a log stream that cannot be written keeps before it drops lines (a full disk, a closed pipe)
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/**
 * The replica's log stream on file descriptor `fd` (1: stdout), which never crashes the replica:
 * a write that fails (ENOSPC on a full disk, EPIPE) is said once on stderr, the lines wait (up to
 * 4 MB, then newer ones are dropped) and go out when writing works again. pino's own destination
 * emits the error, and a process with no listener for it dies (`muster drill`, full-disk).
 */
export function logDestination(fd: number): DestinationStream {
  const dest = pino.destination({ dest: fd, sync: true, maxLength: MAX_BUFFERED_BYTES });
  let failing = false;
  dest.on('error', (err: NodeJS.ErrnoException) => {
    if (failing) return;
    failing = true;
    try {
      process.stderr.write(`muster scheduler: the log stream failed (${err.code ?? err.message}): lines wait, then are dropped, until it can be written again\n`);
    } catch {
      // stderr fails too: nothing left to tell
    }
  });
  dest.on('write', () => (failing = false));
  return dest;
}
