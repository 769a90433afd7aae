// `took the free lease`, `took over the lease` (LeaseKeeper): the lines a replica logs when it wins the lease
const WON = /"msg":"took (?:the free|over the) lease/;
const TIME = /"time":(\d+)/;

/** The times (ms since the epoch) a replica's pino log says it won the lease, in order. */
export function leaseWins(log: string): number[] {
  const out: number[] = [];
  for (const line of log.split('\n')) {
    if (!WON.test(line)) continue;
    const time = TIME.exec(line)?.[1];
    if (time !== undefined) out.push(Number(time));
  }
  return out;
}

// `elected: leading` (LeaderTerm): logged once the replica's LeaderElected is in the log, with its sequence
const ELECTED = /"msg":"elected: leading"/;
const SEQ = /"seq":(\d+)/;

/** When a replica's pino log says each of its elections landed: LeaderElected's log sequence to the time (ms since the epoch). */
export function electionsLogged(log: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const line of log.split('\n')) {
    if (!ELECTED.test(line)) continue;
    const time = TIME.exec(line)?.[1];
    const seq = SEQ.exec(line)?.[1];
    if (time !== undefined && seq !== undefined) out.set(Number(seq), Number(time));
  }
  return out;
}
