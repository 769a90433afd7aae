import { isBusError } from '@muster/bus';
import { openFeed } from './auditFeed.ts';
import type { AuditOptions, AuditReport, DecisionsStreamReport } from './auditReport.ts';
import type { AuditSource } from './auditSource.ts';
import { AuditorError } from './auditorError.ts';
import { DecisionsCheck } from './decisionsCheck.ts';
import { LogAuditor } from './logAuditor.ts';
import { WorkerShare, useWorker } from './parallelAudit.ts';
import { ProgressMeter } from './progressMeter.ts';
import { isOfflineHistory } from './auditSource.ts';
import type { WorkerResult } from './workerProtocol.ts';

/**
 * Audits a log (MUSTER_LOG through a bus, or an offline history): replays it with the
 * same core and checks the hash chain, every session's decisions re-derived from the state before
 * it, every ingest re-derived from its inputs (when available), heartbeat losses, checkpoints,
 * snapshots, the invariants of DESIGN.md §7 after every transaction, and MUSTER_DECISIONS against
 * the log. A failed check is reported, never thrown; `clean` says whether there was none.
 */
export async function auditLog(source: AuditSource, opts: AuditOptions = {}): Promise<AuditReport> {
  const started = performance.now();
  const fromSeq = opts.fromSeq ?? 1;
  if (!Number.isInteger(fromSeq) || fromSeq < 1) throw new AuditorError('bad-range', `fromSeq must be a positive integer, got ${fromSeq}`);
  if (opts.toSeq !== undefined && (!Number.isInteger(opts.toSeq) || opts.toSeq < fromSeq)) {
    throw new AuditorError('bad-range', `toSeq must be an integer not below fromSeq ${fromSeq}, got ${opts.toSeq}`);
  }
  const feed = await openFeed(source);
  const toSeq = Math.min(opts.toSeq ?? Number.POSITIVE_INFINITY, feed.lastSeq ?? Number.POSITIVE_INFINITY);
  // the snapshots are listed first and read while the log is replayed
  const stored = await feed.snapshots();
  const snapshots = new Set(stored.seqs);

  // Over NATS a worker thread folds the same log and takes re-derivations over while it keeps up;
  // it compares MUSTER_DECISIONS too (at its own pace) when the caller says how it connects.
  const parallel = !isOfflineHistory(source) && useWorker(opts.parallel, feed.logBytes);
  const connection = parallel ? (opts.connection ?? null) : null;
  const share = parallel ? WorkerShare.start(fromSeq, connection) : null;
  const decisions = feed.decisions === null || connection !== null ? null : new DecisionsCheck(fromSeq, (f) => auditor.fail(f.seq, f.check, f.message));
  const auditor = new LogAuditor({ fromSeq, openInputs: feed.openInputs, snapshots, decisions, helper: share });
  const stop = new AbortController();
  const reading = decisions === null || feed.decisions === null ? Promise.resolve() : readAll(feed.decisions(stop.signal), (batch) => {
    for (const m of batch) decisions.fromStream(m);
  });
  // a reader that fails is awaited below; until then its rejection must not go unhandled
  reading.catch(() => undefined);
  const meter = opts.onProgress === undefined ? null : new ProgressMeter(Math.max(fromSeq, Math.min(toSeq, feed.lastSeq ?? toSeq)), opts.onProgress);

  // the read stopped at a transaction it could not fold or at a broken chain (each a failure already)
  let readFailed = false;
  try {
    for await (const entry of feed.entries()) {
      if (entry.seq > toSeq) break;
      try {
        await auditor.transaction(entry.seq, entry.tx, entry.payload);
      } catch (err) {
        // a read that failed (reading the inputs: a timeout, a lost connection) is not the log's fault
        if (!threwFolding(err)) throw err;
        // folding threw (the core met a state it cannot have made): say so, and judge what was read
        auditor.fail(entry.seq, 'structure', `the audit cannot go on past log ${entry.seq}: folding it threw (${(err as Error).message})`);
        readFailed = true;
        break;
      }
      if (share !== null) await share.backpressure();
      meter?.tick(entry.seq);
    }
  } catch (err) {
    // a message that is not a transaction ends the read: the chain is broken there
    if (!isBusError(err) || err.seq === undefined) {
      stop.abort();
      share?.abort();
      await auditor.finish();
      throw err;
    }
    auditor.breakChain({ seq: err.seq, message: err.message });
    readFailed = true;
  }
  share?.end();
  await auditor.finish();
  meter?.done(auditor.lastSeq);
  // a read served by a copy behind its stream (a NATS node whose copy stopped catching up) ends
  // early and would audit a prefix as if it were the whole log
  const end = Math.min(toSeq, feed.lastSeq ?? 0);
  if (!readFailed && auditor.lastSeq < end) {
    auditor.fail(auditor.lastSeq + 1, 'structure', `the read of the log ended at ${auditor.lastSeq}, but MUSTER_LOG's last sequence was ${end} when the audit began: the copy it was read from is behind its stream (a NATS node whose copy stopped catching up); audit again`);
  }

  const verified = await stored.checks;
  auditor.checkSnapshots(verified.checks);

  let decisionsStream: DecisionsStreamReport = { available: false, checked: 0, missing: 0, mismatched: 0, inFlight: 0, unexpected: 0, duplicated: 0 };
  if (decisions !== null) {
    await reading;
    decisionsStream = decisions.finish(auditor.lastSeq);
  }
  // the main thread hashes the state while the worker finishes its share
  const stateHash = auditor.hash();
  if (share !== null) {
    const part = await share.finish();
    merge(auditor, part);
    if (part.decisionsStream !== null) decisionsStream = part.decisionsStream;
  }
  return report(auditor, { stateHash, fromSeq, stored: [...stored.notes, ...verified.notes], skipped: stored.skipped, decisionsStream, hasInputs: feed.openInputs !== null, started });
}

/** Adds what the worker of a parallel audit found to the main thread's findings. */
function merge(auditor: LogAuditor, part: WorkerResult): void {
  const counts: Record<string, number> = auditor.counts;
  for (const [key, value] of Object.entries(part.counts)) counts[key] = (counts[key] ?? 0) + value;
  auditor.failures.merge(part.failures, part.failureCount);
  auditor.divergences.offer(part.divergence);
  auditor.timings.ingestMs += part.ingestMs;
  auditor.timings.decideMs += part.decideMs;
}

/**
 * Whether an error thrown while auditing a transaction came from folding it (the core's own
 * errors: plain, type and range errors) rather than from reading (nats.js names its errors, e.g.
 * TimeoutError, RequestError; the bus's carry a code).
 */
function threwFolding(err: unknown): boolean {
  return err instanceof Error && !isBusError(err) && (err.name === 'Error' || err.name === 'TypeError' || err.name === 'RangeError') && !('code' in err);
}

async function readAll<T>(items: AsyncIterable<T>, each: (item: T) => void): Promise<void> {
  for await (const item of items) each(item);
}

interface ReportContext {
  stateHash: string;
  fromSeq: number;
  stored: string[];
  skipped: number;
  decisionsStream: DecisionsStreamReport;
  hasInputs: boolean;
  started: number;
}

function report(auditor: LogAuditor, ctx: ReportContext): AuditReport {
  const c = auditor.counts;
  const notes = [...ctx.stored];
  if (ctx.fromSeq > 1) notes.push(`transactions 1..${ctx.fromSeq - 1} were replayed (hash chain verified) but not checked`);
  if (c.inputsStructural > 0) {
    notes.push(ctx.hasInputs
      ? `${c.inputsStructural} ingested input(s) are no longer on MUSTER_IN: their events were checked for structure only (each names its input once, in order)`
      : `no inputs: ${c.inputsStructural} ingested input(s) were checked for structure only (each names its input once, in order), not re-derived`);
  }
  if (!ctx.decisionsStream.available) notes.push('offline history: MUSTER_DECISIONS not compared');
  if (ctx.decisionsStream.inFlight > 0) notes.push(`${ctx.decisionsStream.inFlight} decision message(s) of the last transactions are not published yet (in flight, not a failure)`);
  const chain = auditor.chainBreak === null ? { ok: true } : { ok: false, brokenAt: auditor.chainBreak.seq, message: auditor.chainBreak.message };
  return {
    clean: auditor.failures.count === 0,
    fromSeq: ctx.fromSeq,
    lastSeq: auditor.lastSeq,
    transactions: c.transactions,
    events: c.events,
    sessions: c.sessions,
    sessionsCutShort: c.sessionsCutShort,
    decisionsRederived: c.decisionsRederived,
    eventsRederived: c.eventsRederived,
    ingest: { rederived: c.inputsRederived, structural: c.inputsStructural, lost: c.inputsLost },
    checkpoints: { checked: c.checkpointsChecked, failed: c.checkpointsFailed },
    snapshots: { checked: c.snapshotsChecked, failed: c.snapshotsFailed, skipped: ctx.skipped },
    invariants: { checked: auditor.invariants.checked, count: auditor.invariants.count, violations: auditor.invariants.violations },
    decisionsStream: ctx.decisionsStream,
    chain,
    divergence: auditor.divergences.first,
    divergences: c.divergences,
    failures: auditor.failures.list(),
    failureCount: auditor.failures.count,
    stateHash: ctx.stateHash,
    notes,
    ms: Math.round(performance.now() - ctx.started),
    timings: {
      decideMs: Math.round(auditor.timings.decideMs),
      ingestMs: Math.round(auditor.timings.ingestMs),
      hashMs: Math.round(auditor.timings.hashMs),
    },
  };
}
