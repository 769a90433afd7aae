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
