import { openFeed } from './auditFeed.ts';
import type { AuditFeed, FeedSnapshots } from './auditFeed.ts';
import type { AuditOptions, AuditReport, DecisionsStreamReport } from './auditReport.ts';
import type { AuditSource } from './auditSource.ts';
import { AuditorError } from './auditorError.ts';
import { DecisionsCheck } from './decisionsCheck.ts';
import { LogAuditor } from './logAuditor.ts';
import { RangeShare, lastSplit, splitPoint, useWorker } from './parallelAudit.ts';
import { ProgressMeter } from './progressMeter.ts';
import { replayEntries } from './replayEntries.ts';
import { isOfflineHistory } from './auditSource.ts';
import type { RangeResult } from './workerProtocol.ts';

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
  const snapshots = new Set(stored.stored.map((s) => s.seq));

  const decisions = feed.decisions === null ? null : new DecisionsCheck(fromSeq, (f) => auditor.fail(f.seq, f.check, f.message));
  const auditor = new LogAuditor({ fromSeq, openInputs: feed.openInputs, snapshots, decisions });
  const stop = new AbortController();
  const reading = decisions === null || feed.decisions === null ? Promise.resolve() : readAll(feed.decisions(stop.signal), (batch) => {
    for (const m of batch) decisions.fromStream(m);
  });
  // a reader that fails is awaited below; until then its rejection must not go unhandled
  reading.catch(() => undefined);
  const meter = opts.onProgress === undefined ? null : new ProgressMeter(Math.max(fromSeq, Math.min(toSeq, feed.lastSeq ?? toSeq)), opts.onProgress);
  const tick = (seq: number): boolean => {
    meter?.tick(seq);
    return false;
  };

  // Over NATS a worker thread audits the log after a stored snapshot near the middle, from that
  // snapshot's state, while this thread audits the log up to it; its findings are taken once this
  // replay reached the snapshot with the same state (else this thread audits the rest itself).
  let share = laterRange(source, feed, stored, fromSeq, toSeq, opts);
  const notes: string[] = [];
  let later: RangeResult | null = null;
  let end;
  try {
    end = await replayEntries(auditor, feed.entries(), toSeq, async (seq) => tick(seq) || (share !== null && seq === share.range.seq && (await splits(auditor, share, stored))));
    if (end === 'stopped') {
      const taken = await share!.take();
      if ('failed' in taken) {
        notes.push(`the audit's worker failed (${taken.failed}): the log after ${share!.range.seq} was audited on the main thread`);
        end = await replayEntries(auditor, feed.entries(share!.range.seq + 1), toSeq, tick);
      } else {
        later = taken;
      }
    } else {
      share?.abandon();
    }
    share = null;
  } catch (err) {
    stop.abort();
    share?.abort();
    await auditor.finish();
    throw err;
  }
  await auditor.finish();
  const lastChecked = auditor.lastSeq;
  if (later !== null) auditor.merge(later);
  meter?.done(auditor.lastSeq);
  // a read served by a copy behind its stream (a NATS node whose copy stopped catching up) ends
  // early and would audit a prefix as if it were the whole log
  const readFailed = end === 'failed' || (later?.readFailed ?? false);
  const last = Math.min(toSeq, feed.lastSeq ?? 0);
  if (!readFailed && auditor.lastSeq < last) {
    auditor.fail(auditor.lastSeq + 1, 'structure', `the read of the log ended at ${auditor.lastSeq}, but MUSTER_LOG's last sequence was ${last} when the audit began: the copy it was read from is behind its stream (a NATS node whose copy stopped catching up); audit again`);
  }

  const verified = await stored.checks;
  auditor.checkSnapshots(verified.checks);

  let decisionsStream: DecisionsStreamReport = { available: false, checked: 0, missing: 0, mismatched: 0, inFlight: 0, unexpected: 0, duplicated: 0 };
  if (decisions !== null) {
    await reading;
    decisionsStream = decisions.finish(lastChecked);
    if (later !== null) decisionsStream = addUp(decisionsStream, later.decisionsStream);
  }
  const stateHash = later?.stateHash ?? auditor.hash();
  return report(auditor, { stateHash, fromSeq, stored: [...stored.notes, ...verified.notes, ...notes], skipped: stored.skipped, decisionsStream, hasInputs: feed.openInputs !== null, started });
}

/** Starts the audit of the log after a stored snapshot on a worker, when the audit runs over NATS in parallel and a snapshot lies inside the range. */
function laterRange(source: AuditSource, feed: AuditFeed, stored: FeedSnapshots, fromSeq: number, toSeq: number, opts: AuditOptions): RangeShare | null {
  Object.assign(lastSplit, { seq: null, taken: false, reachedMs: 0, waitedMs: 0 });
  if (isOfflineHistory(source) || opts.connection === undefined || !Number.isFinite(toSeq) || !useWorker(opts.parallel, feed.logBytes)) return null;
  const seq = splitPoint(stored.stored.map((s) => s.seq), fromSeq, toSeq);
  if (seq === null) return null;
  const snapshot = stored.stored.find((s) => s.seq === seq)!;
  const others = stored.stored.filter((s) => s.seq > seq).map((s) => s.seq);
  return RangeShare.start({ snapshot: snapshot.name, seq, toSeq, snapshots: others, connection: opts.connection });
}

/**
 * Whether the audit stops at the split (the worker's range is taken): the replay can be handed on
 * here, and the snapshot the worker starts from has bytes that hash to its record, which is the
 * replayed state's hash. Otherwise the worker's range is abandoned.
 */
async function splits(auditor: LogAuditor, share: RangeShare, stored: FeedSnapshots): Promise<boolean> {
  const { seq, snapshot } = share.range;
  const hash = auditor.snapshotHash(seq);
  const ok = auditor.splitsHere() && (await stored.checks).checks.some((c) => c.name === snapshot && c.seq === seq && c.problem === null && c.hash === hash);
  if (!ok) share.abandon();
  return ok;
}

/** The decisions stream's report of two ranges in one. */
function addUp(a: DecisionsStreamReport, b: DecisionsStreamReport): DecisionsStreamReport {
  return {
    available: a.available && b.available,
    checked: a.checked + b.checked,
    missing: a.missing + b.missing,
    mismatched: a.mismatched + b.mismatched,
    inFlight: a.inFlight + b.inFlight,
    unexpected: a.unexpected + b.unexpected,
    duplicated: a.duplicated + b.duplicated,
  };
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
