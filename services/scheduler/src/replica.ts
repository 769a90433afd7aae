import type { Logger } from 'pino';
import { LOG_STREAM, lastLogSequence, loadLatestSnapshot, readLog, readLogMessage, sleep, streamInfo } from '@muster/bus';
import type { Bus, PublishedDecision, ReadTransaction } from '@muster/bus';
import { STATE_SCHEMA, initialState } from '@muster/core';
import type { OutboundMessage, State, Transaction } from '@muster/core';
import { LeaderTerm } from './leaderTerm.ts';
import { LeaseKeeper } from './leaseKeeper.ts';
import { LeaseThread } from './leaseThread.ts';
import { LogShrinkWatch } from './logShrinkWatch.ts';
import { derivedMessages, publishedEvidence, publishedTail } from './publishedEvidence.ts';
import type { WonLease } from './leaseKeeper.ts';
import type { ReplicaDeps } from './replicaDeps.ts';
import { Ledger } from './ledger.ts';
import { StampClock } from './stampClock.ts';
import { runRestartable } from './restartable.ts';

/** Where a replica is: following the log, leading it, or stopped. */
export type Role = 'starting' | 'standby' | 'leader' | 'stopped';

const STANDBY_REQUEST_FLOOR_MS = 500;

/**
 * How long one request of a standby's tick may wait: half a lease, so a hung request costs a
 * takeover at most that, but never less than `STANDBY_REQUEST_FLOOR_MS`: with a 400 ms lease a
 * 200 ms bound timed out every look on a network that delays each request 200 ms (the drill's
 * slow-network), so no standby could take over a leader that was gone (a 12.6 s wait, docs/drills.md).
 * A slow look costs no false takeover: a look counts at most half a lease of silence.
 */
export function standbyRequestMs(leaseMs: number): number {
  return Math.max(STANDBY_REQUEST_FLOOR_MS, Math.floor(leaseMs / 2));
}

const CATCH_UP_BATCH = 1000;
const TAIL_WATCHDOG_MS = 2000;
// folded transactions kept at hand, so the check of the published decisions rarely reads the log
const RECENT_TXS = 256;
// log transactions the check of the published decisions may read at rebuild beyond those at hand
// (the newest first; decisions of older ones are not judged): a rebuild from a recent snapshot has
// few at hand. Before leading none is read but the newest decision's: they cost a takeover (32
// parallel reads took 10-50 ms in a drill on this machine)
const MAX_LOG_READS = 32;
// looks at the published decisions a replica that won the lease may take, refreshing it between
// them, when a look cannot find out in time whether the log backs them
const TAKEOVER_LOOKS = 5;

/** What a rebuild did: the snapshot it started from (null: none) and the transactions it replayed. */
export interface RebuildReport {
  snapshotSeq: number | null;
  replayed: number;
  ms: number;
}

/**
 * One scheduler replica: a standby that tails and folds the log until it wins the lease, then a
 * leader until its fencing expectation fails (or the lease is lost), then a standby again.
 */
export class Replica {
  readonly ledger: Ledger;
  // 'starting' until the rebuild is done: its status answers meanwhile, so a slow start is not silence
  private currentRole: Role = 'starting';
  private refusal: string | null = null;
  private readonly shrink: LogShrinkWatch;
  private suspecting = false;
  // since when (monotonic ms) MUSTER_DECISIONS has held a decision the log does not back (null: it has not)
  private unbackedSince: number | null = null;
  // since when (monotonic ms) every read of the log's tail has found a gap (null: the last one folded)
  private gapSince: number | null = null;
  private readonly recent: ReadTransaction[] = [];
  // MUSTER_DECISIONS' last messages as judged before leading, handed to the term (where its publishing resumes)
  private judged: readonly PublishedDecision[] | undefined;
  // the log's end as a stream leader last reported it (0: not yet)
  private logEnd = 0;
  private readonly stopController = new AbortController();
  private running: Promise<void> | null = null;
  private term: LeaderTerm | null = null;
  private lastFold = performance.now();
  private restartTail: () => void = () => undefined;
  private readonly keeper: LeaseKeeper;
  // made when the replica starts (connected by the time it leads): its own thread and NATS connection
  private thread: LeaseThread | null = null;
  private readonly log: Logger;
  // the bus for a standby's looks at the log and the decisions, bounded like its looks at the lease
  private readonly quick: Bus;
  // the bus for the look at the decisions after winning the lease: bounded by a lease, as a failed look is retried at the next tick
  private readonly takeoverBus: Bus;

  constructor(private readonly deps: ReplicaDeps) {
    this.ledger = new Ledger(undefined, null, new StampClock(deps.opts.stampMonotonic));
    this.log = deps.log;
    this.shrink = new LogShrinkWatch(undefined, deps.opts.logLossConfirmMs);
    this.keeper = new LeaseKeeper(deps.lease, deps.opts.id, deps.opts.leaseMs, deps.log.child({ component: 'lease' }), deps.standbyLease ?? deps.lease);
    this.quick = deps.bus.withTimeout(standbyRequestMs(deps.opts.leaseMs));
    this.takeoverBus = deps.bus.withTimeout(Math.max(100, deps.opts.leaseMs));
  }

  /** The folded state (what the read API answers from). */
  get state(): State {
    return this.ledger.state;
  }

  /** The current role. */
  role(): Role {
    return this.currentRole;
  }

  /** Why this replica refuses to lead (a broken or shrunken log), or null. */
  refusedBecause(): string | null {
    return this.refusal;
  }

  /**
   * Rebuilds from the newest compatible snapshot plus the tail (retrying while JetStream is not
   * ready, e.g. a cluster still electing), then runs until stopped.
   */
  async start(): Promise<void> {
    const thread = (this.thread ??= new LeaseThread(this.deps.opts, this.log.child({ component: 'lease' })));
    for (let attempt = 1; ; attempt++) {
      try {
        await this.rebuild();
        break;
      } catch (err) {
        if (this.stopped) return;
        // what was folded stays folded (each transaction chained to the one before): the next
        // attempt goes on from there, or from a newer snapshot
        this.log.warn({ err, attempt, seq: this.ledger.seq }, 'rebuild failed: retrying');
        await sleep(Math.min(2000, 100 * attempt), this.stopController.signal);
      }
    }
    // a leader's lease is refreshed by that thread: it must be connected before this replica can lead
    this.deps.startup?.phase('connecting the lease thread');
    if (!(await thread.ready)) this.log.error('the lease thread did not start: this replica\'s leases will not be refreshed');
    this.running = this.run(thread).catch((err: unknown) => {
      this.log.fatal({ err }, 'replica loop failed');
      this.currentRole = 'stopped';
    });
  }

  /** Finishes the transaction in flight, gives up the lease if held, and stops. */
  async stop(): Promise<void> {
    this.stopController.abort();
    await this.term?.stop();
    await this.running;
    await this.thread?.close();
    this.currentRole = 'stopped';
  }

  private get stopped(): boolean {
    return this.stopController.signal.aborted;
  }

  /**
   * Loads the newest snapshot of this state schema (an older schema is ignored) and replays the
   * tail; says where the snapshot was (null: replayed from sequence 1) and how much it replayed.
   * After a failed attempt it goes on from what that one folded, unless a snapshot is newer.
   */
  async rebuild(): Promise<RebuildReport> {
    const log = this.log.child({ component: 'rebuild' });
    const started = performance.now();
    const startup = this.deps.startup;
    startup?.phase('rebuild: reading the log\'s end');
    const lastSeq = await lastLogSequence(this.deps.bus);
    this.shrink.reset(lastSeq);
    // folded past the log's end (an earlier attempt, on a log that has lost writes since): start over
    if (this.ledger.seq > lastSeq) {
      this.ledger.state = initialState();
      this.ledger.lastHash = null;
      this.ledger.snapshotSeq = 0;
    }
    startup?.phase('rebuild: loading the snapshot', () => ({ lastSeq }));
    const { snapshot, skipped } = await loadLatestSnapshot<State>(this.deps.bus, { schema: STATE_SCHEMA });
    for (const s of skipped) log.warn({ name: s.name, seq: s.seq, err: s.cause }, 'snapshot skipped');
    // the log grows while the store is read (up to the load's 30 s bound): a snapshot the leader saved
    // meanwhile is past the end read before, not past the log's (the hour soak replayed 67,866
    // transactions, 27 s, for one such snapshot); only one still past the end now is ignored
    const end = snapshot !== null && snapshot.seq > lastSeq ? await lastLogSequence(this.deps.bus) : lastSeq;
    if (snapshot !== null && snapshot.seq <= end && snapshot.seq > this.ledger.seq && snapshot.state.schema === STATE_SCHEMA) {
      const at = await readLogMessage(this.deps.bus, snapshot.seq);
      if (at !== null) {
        this.ledger.state = snapshot.state;
        this.ledger.lastHash = at.hash;
        this.ledger.eventsSinceSnapshot = 0;
        this.ledger.snapshotSeq = snapshot.seq;
        log.info({ seq: snapshot.seq }, 'loaded snapshot');
      }
    } else if (snapshot !== null && snapshot.seq > end) {
      log.warn({ seq: snapshot.seq, lastSeq: end }, 'snapshot is ahead of the log: ignored');
    }
    const from = this.ledger.seq;
    startup?.phase('rebuild: replaying the log', () => ({ folded: this.ledger.seq, lastSeq }));
    await this.catchUp();
    // a log rebuilt from may be one that lost writes whose decisions went out: look before standing by
    startup?.phase('rebuild: checking the published decisions', () => ({ folded: this.ledger.seq }));
    const published = await publishedTail(this.deps.bus).catch((err: unknown) => {
      log.warn({ err }, 'the published decisions could not be read: not checked at rebuild');
      return undefined;
    });
    // a read that fails here (served by a NATS node whose copy stalled) leaves the check to the
    // one before leading: failing the rebuild for it kept a restarted replica from standing by for
    // over a minute in the hour soak, each retry failing the same read
    if (published !== undefined) {
      await this.checkPublished(published, true, this.deps.bus, MAX_LOG_READS).catch((err: unknown) => {
        log.warn({ err }, 'the published decisions could not be checked: left to the check before leading');
      });
    }
    const report: RebuildReport = { snapshotSeq: this.ledger.snapshotSeq === 0 ? null : this.ledger.snapshotSeq, replayed: this.ledger.seq - from, ms: Math.round(performance.now() - started) };
    log.info({ seq: this.ledger.seq, ...report }, 'rebuilt');
    return report;
  }

  /** Folds the log from the ledger's next sequence to the stream's current end, in batches. */
  async catchUp(): Promise<void> {
    let batch: ReadTransaction[] = [];
    for await (const logged of readLog(this.deps.bus, { fromSeq: this.ledger.seq + 1, prevHash: this.ledger.lastHash })) {
      batch.push(logged);
      if (batch.length >= CATCH_UP_BATCH) {
        this.foldChecked(batch);
        batch = [];
      }
    }
    this.foldChecked(batch);
  }

  /** Folds transactions, refusing to lead if a checkpoint disagrees with the fold. */
  foldChecked(txs: ReadTransaction[]): void {
    for (const t of txs.length > RECENT_TXS ? txs.slice(-RECENT_TXS) : txs) this.recent.push(t);
    if (this.recent.length > 2 * RECENT_TXS) this.recent.splice(0, this.recent.length - RECENT_TXS);
    for (const m of this.ledger.fold(txs)) {
      this.refuse(`checkpoint at ${m.seq} says ${m.expected} but replay gives ${m.actual}`);
    }
  }

  /** The log's transaction at `seq` if it is among the last folded. */
  private recentTx(seq: number): Transaction | undefined {
    const first = this.recent[0]?.seq;
    if (first === undefined) return undefined;
    const t = this.recent[seq - first];
    return t?.seq === seq ? t.tx : this.recent.find((r) => r.seq === seq)?.tx;
  }

  private refuse(reason: string): void {
    if (this.refusal === null) this.log.error({ reason }, 'ALARM: this replica refuses to lead');
    this.refusal = reason;
  }

  private async run(thread: LeaseThread): Promise<void> {
    while (!this.stopped) {
      try {
        this.currentRole = 'standby';
        const won = await this.standby();
        if (won === 'again') continue;
        if (won === null || this.stopped) break;
        this.currentRole = 'leader';
        const published = this.judged;
        this.judged = undefined;
        this.term = new LeaderTerm(this.deps, this.ledger, won, this.keeper, thread, { published, recentTx: (seq) => this.recentTx(seq) });
        const why = await this.term.run();
        this.log.info({ why, seq: this.ledger.seq }, 'left leadership');
        // the log holds another transaction where this replica's fold ends: what it folded is not the log
        if (why === 'diverged') this.refuse(`the log's transaction at ${this.ledger.seq} is not the one folded there`);
      } catch (err) {
        // a replica never gives up: NATS comes back, and the log says where we are
        this.log.error({ err }, 'replica loop failed: standing by again');
        await sleep(500, this.stopController.signal);
      } finally {
        this.term = null;
      }
    }
    this.currentRole = 'stopped';
  }

  /** Tails and folds the log while watching the lease; returns the lease when won. */
  private async standby(): Promise<WonLease | null | 'again'> {
    const tailStop = new AbortController();
    const onStop = (): void => tailStop.abort();
    this.stopController.signal.addEventListener('abort', onStop, { once: true });
    const tail = this.tail(tailStop.signal);
    try {
      const tick = Math.max(20, Math.floor(this.deps.opts.leaseMs / 5));
      while (!this.stopped) {
        await sleep(tick, this.stopController.signal);
        if (this.stopped) return null;
        try {
          // a log end behind what was seen, not yet confirmed, holds the lease back too
          if (!(await this.checkLogNotShrunk()) || this.refusal !== null) continue;
          // so does a published decision the log did not back at the last look, until it is confirmed or gone
          if (this.unbackedSince !== null && !(await this.checkPublished(await publishedTail(this.quick), false, this.quick, 0))) continue;
          const won = await this.keeper.tryAcquire(this.ledger.state.term);
          if (won === null) continue;
          tailStop.abort();
          return await this.checkBeforeLeading(won, tail);
        } catch (err) {
          this.log.warn({ err }, 'standby tick failed');
        }
      }
      return null;
    } finally {
      tailStop.abort();
      await tail;
      this.stopController.signal.removeEventListener('abort', onStop);
    }
  }

  /**
   * After winning the lease: catches up and judges the published decisions against the log (read
   * while the tail is caught up: a decision read before the log's end is backed by it unless the
   * log lost it). It leads only on a log that backs them: a leader that wrote over lost writes would
   * hide their evidence, its own decisions becoming the last ones. When that cannot be found out in
   * time (NATS slow or a copy behind), it keeps the lease and looks again, up to TAKEOVER_LOOKS
   * times: giving it back at once made, at 200 gangs/s, 222 leases taken and given back in one
   * drill, each look a new consumer on the busy stream. Otherwise the lease is given up. The lease
   * thread refreshes the lease from the win on, into the term (LeaderTerm holds it on, and drops it
   * when the term ends): at the 400 ms lease a check on a loaded machine (the catch-up,
   * MUSTER_DECISIONS' tail, five or six round trips) outlasted it, another standby took the lease
   * over mid-check, and the two replicas' elections raced (docs/drills.md).
   */
  private async checkBeforeLeading(won: WonLease, tail: Promise<void>): Promise<WonLease | 'again'> {
    const unchecked = (err: unknown): 'unknown' => {
      this.log.warn({ err }, 'the published decisions could not be checked: not leading yet');
      return 'unknown';
    };
    const thread = this.thread;
    let lost = false;
    thread?.hold(won, () => (lost = true));
    let checked: WonLease | 'again' = 'again';
    try {
      for (let look = 1; ; look++) {
        thread?.tick();
        const published = publishedTail(this.takeoverBus).then((d) => d, unchecked);
        await tail;
        await this.catchUp();
        thread?.tick();
        const decisions = await published;
        const verdict = decisions === 'unknown' ? decisions : await this.checkPublished(decisions, true, this.takeoverBus, 0).catch(unchecked);
        if (verdict === true) {
          if (decisions !== 'unknown') this.judged = decisions;
          checked = won;
          break;
        }
        // the log does not back what was published: never lead on it; nor on a lease someone else took
        if (verdict === false || look >= TAKEOVER_LOOKS || lost) break;
      }
    } catch (err) {
      this.log.warn({ err }, 'could not catch up after winning the lease: not leading yet');
    }
    // the thread goes on refreshing into the term (a gap before the term held it again outlasted a
    // lease on a slow link); given up, the lease's last revision comes back for the release
    if (checked !== 'again' && !lost) return checked;
    await thread?.drop(won);
    await this.keeper.release(won).catch(() => undefined);
    return 'again';
  }

  /** Follows the log as it grows, folding each transaction, until `signal` aborts. */
  private async tail(signal: AbortSignal): Promise<void> {
    const log = this.log.child({ component: 'follow' });
    // one attempt per consumer: `checkLogNotShrunk` restarts one that silently stopped delivering
    await runRestartable(
      signal,
      (restart) => {
        this.restartTail = restart;
      },
      async (attempt) => {
        for await (const logged of readLog(this.deps.bus, { fromSeq: this.ledger.seq + 1, prevHash: this.ledger.lastHash, tail: true, signal: attempt })) {
          this.foldChecked([logged]);
          this.lastFold = performance.now();
          this.gapSince = null;
        }
      },
      async (err) => {
        log.error({ err, seq: this.ledger.seq }, 'log tail failed');
        const code = (err as { code?: string }).code;
        const broken = `log is broken after ${this.ledger.seq}: ${(err as Error).message}`;
        if (code === 'LOG_GAP') {
          // a consumer placed on a NATS node whose copy is still being filled (restarted on an empty
          // store) delivers from sequence 1: a gap that reading again does not show is not the log's
          const now = performance.now();
          this.gapSince ??= now;
          const forMs = Math.round(now - this.gapSince);
          if (forMs >= this.deps.opts.logLossConfirmMs) this.refuse(`${broken} (for ${forMs} ms)`);
        } else if (code === 'CHAIN_BROKEN' || code === 'BAD_MESSAGE') {
          this.refuse(broken);
        }
        await sleep(500, signal);
      },
    );
  }

  /**
   * Whether the last decisions on MUSTER_DECISIONS (`tail`, oldest first, read before the log's end
   * was) are backed by the log this replica folded: false while one is not (publishedEvidence: a
   * decision past the log's end, or one that differs from the log there), and once that has stood
   * for the confirmation window the replica alarms and refuses to lead for good. The newest
   * decision past what this replica folded but inside the log's end as its stream leader reports it
   * is folded first (when `canCatchUp`: the tail is not running), else judged at a later look; an
   * answer without a leader is not evidence. Every decision of the tail is judged, not only the
   * newest: a leader that led on a log that lost writes puts its own decisions, which that log
   * backs, above those of the lost history. Bounded: the transactions come from the last ones
   * folded (`RECENT_TXS` to twice that), the newest decision's is read if it is not among them, and
   * at most `maxReads` more are read (decisions of older ones are not judged). `bus`: what to ask
   * with (a standby's looks are bounded shorter than a lease).
   */
  private async checkPublished(tail: readonly PublishedDecision[], canCatchUp: boolean, bus: Bus, maxReads: number): Promise<boolean> {
    const d = tail[tail.length - 1];
    if (d === undefined) return this.backed();
    if (d.logSeq > this.ledger.seq) {
      const { lastSeq, authoritative } = await streamInfo(bus, LOG_STREAM);
      if (!authoritative) return this.unbackedSince === null;
      if (lastSeq >= d.logSeq) {
        // this replica is behind the log: fold up to the decision, then judge it
        if (!canCatchUp) return this.unbackedSince === null;
        await this.catchUp();
        if (d.logSeq > this.ledger.seq) return this.unbackedSince === null;
      } else {
        return this.unbacked(publishedEvidence(d, lastSeq, null)!);
      }
    }
    const end = this.ledger.seq;
    const judged = tail.filter((p) => p.logSeq <= end);
    const txs = await this.transactionsAt(judged.map((p) => p.logSeq), bus, maxReads);
    // each transaction's messages derived once, for all of its decisions
    const derived = new Map<number, OutboundMessage[]>();
    const derive = (seq: number, tx: Transaction): OutboundMessage[] => {
      let messages = derived.get(seq);
      if (messages === undefined) derived.set(seq, (messages = derivedMessages(seq, tx)));
      return messages;
    };
    // the newest first: the evidence names the decision closest to the log's end
    for (let i = judged.length - 1; i >= 0; i--) {
      const p = judged[i]!;
      const tx = txs.get(p.logSeq);
      // a transaction neither at hand nor read (past the bound): that decision is not judged
      if (tx === undefined) continue;
      const evidence = publishedEvidence(p, end, tx === null ? null : derive(p.logSeq, tx));
      if (evidence !== null) return this.unbacked(evidence);
    }
    return this.backed();
  }

  /**
   * The log's transactions at `seqs` (ascending): those among the last folded, the last of `seqs`
   * and at most `maxReads` of the others (the newest) read in parallel; null for a sequence the log
   * does not hold.
   */
  private async transactionsAt(seqs: readonly number[], bus: Bus, maxReads: number): Promise<Map<number, Transaction | null>> {
    const out = new Map<number, Transaction | null>();
    const recent = new Map(this.recent.map((t) => [t.seq, t.tx] as const));
    const missing = new Set<number>();
    for (const seq of seqs) {
      const tx = recent.get(seq);
      if (tx !== undefined) out.set(seq, tx);
      else missing.add(seq);
    }
    const reads = [...missing].sort((a, b) => b - a).slice(0, Math.max(maxReads, missing.has(seqs[seqs.length - 1]!) ? 1 : 0));
    const read = await Promise.all(reads.map((seq) => readLogMessage(bus, seq)));
    reads.forEach((seq, i) => out.set(seq, read[i]?.tx ?? null));
    return out;
  }

  private backed(): boolean {
    if (this.unbackedSince !== null) this.log.info('the last published decision is backed by the log again');
    this.unbackedSince = null;
    return true;
  }

  private unbacked(evidence: string): boolean {
    const now = performance.now();
    if (this.unbackedSince === null) {
      this.unbackedSince = now;
      this.log.warn({ reason: evidence }, 'a published decision the log does not back: not leading until it is confirmed or gone');
    }
    const forMs = Math.round(now - this.unbackedSince);
    if (forMs >= this.deps.opts.logLossConfirmMs) this.refuse(`${evidence} (for ${forMs} ms)`);
    return false;
  }

  /**
   * Alarms (and refuses to lead) when the stream's last sequence goes backwards and stays so
   * (LogShrinkWatch: an answer no stream leader stood behind is not evidence); false while an
   * answer behind what was seen is not yet confirmed (or confirmed: the replica refuses).
   */
  private async checkLogNotShrunk(): Promise<boolean> {
    // the tail folds on while the stream info is in flight: compare with what was folded before asking
    const folded = this.ledger.seq;
    const { lastSeq: last, leader } = await streamInfo(this.quick, LOG_STREAM);
    // an ordered consumer can stall without an error when a NATS node restarts
    if (last > folded && performance.now() - this.lastFold > TAIL_WATCHDOG_MS) {
      this.log.warn({ seq: folded, last }, 'log tail stalled: restarting it');
      this.lastFold = performance.now();
      this.restartTail();
    }
    // the log grew since the last look, as a stream leader reports it: a leader is writing. Seen
    // now, like a new revision of the lease (dating it back to the look before made slow looks on a
    // loaded machine, 600 ms apart, look like a dead leader)
    if (leader !== '' && last > this.logEnd && this.logEnd > 0) this.keeper.sawActivity();
    if (leader !== '') this.logEnd = Math.max(this.logEnd, last);
    const verdict = this.shrink.observe(last, leader, folded);
    if (verdict === 'suspect' && !this.suspecting) this.log.warn({ reason: this.shrink.reason }, 'log end behind what was seen: not leading until it is confirmed or gone');
    this.suspecting = verdict === 'suspect';
    if (verdict === 'shrunk') this.refuse(this.shrink.reason);
    return verdict === 'ok' || verdict === 'unknown';
  }
}
