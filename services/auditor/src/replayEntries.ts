import { isBusError } from '@muster/bus';
import type { FeedEntry } from './auditFeed.ts';
import type { LogAuditor } from './logAuditor.ts';

/** How a replay ended: at the end of the entries (or past `toSeq`), stopped by the caller after a transaction, or at one it could not read or fold (a failure already). */
export type ReplayEnd = 'end' | 'stopped' | 'failed';

/**
 * Feeds a log's entries to an auditor, up to `toSeq`. A transaction whose folding throws (the core
 * met a state it cannot have made) ends the read, as does a message that is not a transaction (the
 * chain breaks there); both are reported as failures. Any other error (a read that failed) is
 * thrown. `after` is asked after each transaction whether to stop there.
 */
export async function replayEntries(auditor: LogAuditor, entries: AsyncIterable<FeedEntry>, toSeq: number, after: (seq: number) => boolean | Promise<boolean>): Promise<ReplayEnd> {
  try {
    for await (const entry of entries) {
      if (entry.seq > toSeq) return 'end';
      try {
        await auditor.transaction(entry.seq, entry.tx, entry.payload);
      } catch (err) {
        // a read that failed (reading the inputs: a timeout, a lost connection) is not the log's fault
        if (!threwFolding(err)) throw err;
        auditor.fail(entry.seq, 'structure', `the audit cannot go on past log ${entry.seq}: folding it threw (${(err as Error).message})`);
        return 'failed';
      }
      if (await after(entry.seq)) return 'stopped';
    }
    return 'end';
  } catch (err) {
    // a message that is not a transaction ends the read: the chain is broken there
    if (!isBusError(err) || err.seq === undefined) throw err;
    auditor.breakChain({ seq: err.seq, message: err.message });
    return 'failed';
  }
}

/**
 * Whether an error thrown while auditing a transaction came from folding it (the core's own
 * errors: plain, type and range errors) rather than from reading (nats.js names its errors, e.g.
 * TimeoutError, RequestError; the bus's carry a code).
 */
function threwFolding(err: unknown): boolean {
  return err instanceof Error && !isBusError(err) && (err.name === 'Error' || err.name === 'TypeError' || err.name === 'RangeError') && !('code' in err);
}
