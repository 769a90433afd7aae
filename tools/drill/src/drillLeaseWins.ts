// `took the free lease`, `took over the lease` (LeaseKeeper): the lines a replica logs when it wins the lease
const WON = /"msg":"took (?:the free|over the) lease/;
const TIME = /"time":(\d+)/;

/** The times (ms since the epoch) a replica's pino log says it won the lease, in order. */
export function leaseWins(log: string): number[] {
  return [...linesLogged(log, WON)].map(([time]) => time);
}

// `elected: leading` (LeaderTerm): logged once the replica's LeaderElected is in the log, with its sequence
const ELECTED = /"msg":"elected: leading"/;
const SEQ = /"seq":(\d+)/;

/** When a replica's pino log says each of its elections landed: LeaderElected's log sequence to the time (ms since the epoch). */
export function electionsLogged(log: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const [time, line] of linesLogged(log, ELECTED)) {
    const seq = SEQ.exec(line)?.[1];
    if (seq !== undefined) out.set(Number(seq), time);
  }
  return out;
}

// the lines of a pino log that match `pattern`, with the time each was logged (ms since the epoch)
function* linesLogged(log: string, pattern: RegExp): Generator<[number, string]> {
  for (const line of log.split('\n')) {
    if (!pattern.test(line)) continue;
    const time = TIME.exec(line)?.[1];
    if (time !== undefined) yield [Number(time), line];
  }
}
