import type { Logger } from 'pino';
import { LOG_STREAM, listSnapshots, nativeStateHashInSlices, payloadHash, readLogMessage, saveSnapshot, sleep, streamInfo } from '@muster/bus';
import { STATE_SCHEMA, TurnContext, shardGet, turnSteps } from '@muster/core';
import type { State, TurnCommand, TurnResult } from '@muster/core';
import { AppendPipeline } from './appendPipeline.ts';
import { DecisionOutbox } from './decisionOutbox.ts';
import type { DecisionOutboxDeps } from './decisionOutbox.ts';
import { InputReader } from './inputReader.ts';
import type { ReplicaDeps } from './replicaDeps.ts';
import type { LeaseKeeper, WonLease } from './leaseKeeper.ts';
import type { LeaseThread } from './leaseThread.ts';
import type { Ledger } from './ledger.ts';
import { WakeSignal } from './wakeSignal.ts';
import { stepInSlices } from './stepInSlices.ts';

/** Why a leadership term ended. */
export type TermEnd = 'stopped' | 'fenced' | 'diverged' | 'unknown-outcome' | 'lease-lost' | 'error';

// ids in one JobsRetired: a few tens of kB, so the transaction stays small
const MAX_RETIRED_PER_TURN = 2000;
const IDLE_WAKE_MS = 250;

/**
 * One term of leadership: append LeaderElected (fenced), re-publish what the predecessor left
 * unpublished, then take turns: each turn hands the core's `turn` the inputs read so far, the
 * facts due (silent nodes, retirement), a session and the checkpoint due, and sends the
 * transactions it returns through the append pipeline, until the fence fails, the lease is lost,
 * or the replica stops. The term only gathers commands and moves bytes: every decision is the core's.
 */
export class LeaderTerm {
  private readonly wake = new WakeSignal();
  private readonly stopController = new AbortController();
  private readonly context = new TurnContext({ digest: payloadHash });
  private readonly pipeline: AppendPipeline;
  private readonly outbox: DecisionOutbox;
  private readonly reader: InputReader;
  private ended: TermEnd | null = null;
  private inFlight: Promise<void> = Promise.resolve();
  private snapshotting: Promise<void> = Promise.resolve();
  // no snapshot before the stored ones are listed: one saved by another leader may make it early
  private snapshotsListed = false;
  private lastOverdueCheck = 0;
  private lastSlowTurn = Number.NEGATIVE_INFINITY;
  // a checkpoint marked: its hash being computed (null), or known and waiting for the next turn
  private checkpointing: { seq: number; stateHash: string | null } | null = null;
  private readonly log: Logger;

  constructor(
    private readonly deps: ReplicaDeps,
    private readonly ledger: Ledger,
    private readonly won: WonLease,
    private readonly keeper: LeaseKeeper,
    private readonly thread: LeaseThread,
    handover: Pick<DecisionOutboxDeps, 'published' | 'recentTx'> = {},
  ) {
    this.log = deps.log.child({ term: won.term });
    // snapshots count from the newest, whichever term saved it (terms shorter than `snapshotEvery`
    // would otherwise never save one): one saved by another leader since this replica rebuilt too
    listSnapshots(deps.bulkBus ?? deps.bus)
      .then(
        (stored) => {
          const newest = Math.max(0, ...stored.filter((s) => s.schema === STATE_SCHEMA).map((s) => s.seq));
          if (newest <= ledger.snapshotSeq) return;
          ledger.snapshotSeq = newest;
          // the events since it are not known: count from now, rather than snapshot again at once on taking over
          ledger.eventsSinceSnapshot = 0;
        },
        (err: unknown) => this.log.debug({ err }, 'the stored snapshots could not be listed'),
      )
      .finally(() => (this.snapshotsListed = true));
    this.pipeline = new AppendPipeline(deps.bus, ledger, {
      adopted: (result) => this.adopted(result),
      failed: (result, of) => {
        this.log.child({ component: 'append' }).warn({ code: result.code, committed: result.committed.length, of, err: result.cause }, 'append failed: stepping down');
        this.finish(result.code === 'conflict' ? 'fenced' : result.code === 'timeout' ? 'unknown-outcome' : 'error');
      },
    });
    this.outbox = new DecisionOutbox({ bus: deps.bus, log: this.log.child({ component: 'publish' }), ...handover }, ledger);
    this.reader = new InputReader({
      bus: deps.bus,
      log: this.log.child({ component: 'ingest' }),
      signal: this.stopController.signal,
      onInput: () => this.wake.notify(),
      now: () => this.stampNow(),
    }, ledger.state.lastInputSeq + 1);
  }

  /** Leads until the term ends; says why. */
  async run(): Promise<TermEnd> {
    try {
      return await this.lead();
    } catch (err) {
      this.log.error({ err }, 'leadership failed: stepping down');
      this.finish('error');
      return this.end();
    } finally {
      // no refresh after the term, however it ended (a no-op when dropped already)
      await this.thread.drop(this.won);
    }
  }

  private async lead(): Promise<TermEnd> {
    // the catch-up after winning the lease may have folded a newer leader's term: never go back
    this.won.term = Math.max(this.won.term, this.ledger.state.term + 1);
    this.pipeline.resetTip();
    // the inputs' consumer is set up while the election is checked and appended (a takeover's
    // first decision waited for it after: 300-470 ms in a drill); the first turn takes what it read
    const reading = this.reader.run();
    let elected = false;
    try {
      // a new log's first leader also writes the v1.1 defaults (the turn knows whether the log is new)
      elected = (await this.foldedEndIsTheLogs()) && (await this.pipeline.send(await this.turn([{ elect: true }, { start: true }])));
    } finally {
      if (!elected) {
        this.end();
        await reading;
      }
    }
    if (!elected) return this.end();
    this.log.child({ component: 'append' }).info({ seq: this.ledger.seq, lastInputSeq: this.ledger.state.lastInputSeq }, 'elected: leading');
    this.deps.heartbeats.graceAll();
    this.deps.heartbeats.answerLost((nodeId) => shardGet(this.pipeline.tip.state.nodes, nodeId)?.status === 'lost');
    this.thread.hold(this.won, () => {
      this.log.child({ component: 'lease' }).warn('lease taken by another replica: stepping down');
      this.finish('lease-lost');
    });
    const readers = [reading, this.watchLogEnd()];
    while (this.ended === null) {
      this.thread.tick();
      // timeouts and limits held back by inputs not yet taken (InputReader.ingestCut) wait for them:
      // they wake the loop; a guard against preemption runs out on time all the same
      const state = this.pipeline.tip.state;
      const deadline = this.reader.ingestCut() === null ? this.context.deadlines.next(state) : this.context.deadlines.nextGuardExpiry(state);
      const wait = deadline === null ? IDLE_WAKE_MS : Math.min(IDLE_WAKE_MS, deadline - this.stampNow());
      await this.wake.wait(wait);
      if (this.ended !== null) break;
      this.inFlight = this.step();
      await this.inFlight;
    }
    this.stopController.abort();
    await Promise.all(readers);
    await this.pipeline.settled();
    await this.outbox.idle();
    await this.snapshotting;
    await this.thread.drop(this.won);
    if (this.ended === 'stopped') await this.keeper.release(this.won).catch(() => undefined);
    return this.end();
  }

  /**
   * Whether the stream's leader holds, at the folded end, the transaction this replica folded there
   * (DESIGN.md §3, contract v1.2). The fence checks sequences only: without this look, a replica
   * that folded another history of the same length (a copy that lost writes since written over)
   * would chain LeaderElected onto a transaction the log does not hold.
   */
  private async foldedEndIsTheLogs(): Promise<boolean> {
    const seq = this.ledger.seq;
    if (seq === 0) return true;
    // the stream's leader answers STREAM.MSG.GET (not a direct get, which any copy may answer)
    const stored = await readLogMessage(this.deps.bus, seq);
    if (stored !== null && stored.hash === this.ledger.lastHash) return true;
    this.log.child({ component: 'append' }).error({ seq, folded: this.ledger.lastHash, stored: stored?.hash ?? null }, 'ALARM: the log\'s transaction at the folded end is not the one folded: not leading');
    this.finish('diverged');
    return false;
  }

  /** Ends the term after the transaction in flight. */
  async stop(): Promise<void> {
    this.finish('stopped');
    await this.inFlight;
    await this.pipeline.settled();
    await this.outbox.idle();
  }

  private end(): TermEnd {
    this.deps.heartbeats.answerLost(null);
    this.stopController.abort();
    return this.ended ?? 'fenced';
  }

  private finish(why: TermEnd): void {
    if (this.ended === null) this.ended = why;
    this.wake.notify();
  }

  /**
   * The core's turn on the tip, stamped with this term and the wall clock, computed in slices of a
   * twelfth of the lease: between them the lease is refreshed, inputs are read and appends are
   * answered, so a long session does not look like a dead leader to a standby.
   */
  private async turn(commands: TurnCommand[]): Promise<TurnResult> {
    const tip = this.pipeline.tip;
    const started = performance.now();
    const steps = turnSteps(this.context, tip.state, tip.lastHash, commands, { term: this.won.term, leader: this.deps.opts.id, at: this.stampNow() });
    const { value: result, busyMs } = await stepInSlices(steps, Math.max(5, this.deps.opts.leaseMs / 12), () => this.thread.tick());
    if (result.session !== null) this.deps.onSession?.(busyMs / 1000);
    // decisions wait for it (they are stamped when it started): said at most once a second
    if (busyMs > this.deps.opts.leaseMs && started - this.lastSlowTurn >= 1000) {
      this.lastSlowTurn = started;
      this.log.warn({ ms: Math.round(busyMs), wallMs: Math.round(performance.now() - started), leaseMs: this.deps.opts.leaseMs, transactions: result.transactions.length }, 'a turn took longer than the lease');
    }
    return result;
  }

  /** The wall clock, held to the log's time as this replica watched it pass (StampClock: a fast clock does not jump the log). */
  private stampNow(): number {
    return this.ledger.stampClock.stamp(this.pipeline.tip.state.lastAt, this.deps.opts.wallClock());
  }

  /** One turn: publish what is owed, then hand the core the buffered inputs, the facts due, a session and a checkpoint. */
  private async step(): Promise<void> {
    // decisions go out in log order (a successor resumes after the last one published): once
    // the outbox knows what is owed, it publishes that in the background and holds this term's
    // decisions behind it, so a takeover's first decisions need not wait for the re-publishing
    if (!(await this.outbox.prepare(() => this.pipeline.settled()))) return;
    try {
      const { opts } = this.deps;
      const commands: TurnCommand[] = [];
      // a timeout or limit due with no input known to be waiting: look whether MUSTER_IN holds more
      // first (a completion stored before a runtime limit must be ingested before the gang is
      // stopped); a guard running out is not held back, so it asks nothing
      const due = this.context.deadlines.nextDue(this.pipeline.tip.state);
      if (due !== null && due <= this.stampNow() && this.reader.ingestCut() === null) {
        await this.reader.lookBehind().catch((err: unknown) => this.log.debug({ err }, 'MUSTER_IN\'s end could not be read before a deadline'));
      }
      const inputs = this.reader.take(opts.maxBatchInputs);
      if (inputs.length > 0) commands.push({ inputs });
      const now = performance.now();
      // scanning every node is not free: look for silent nodes about once a second
      if (now - this.lastOverdueCheck >= 1000) {
        this.lastOverdueCheck = now;
        const lost = this.deps.heartbeats.overdue(this.pipeline.tip.state);
        if (lost.length > 0) commands.push({ lostNodes: lost });
        commands.push({ retire: { retainMs: opts.retainFinishedMs, limit: MAX_RETIRED_PER_TURN } });
      }
      // timeouts and runtime limits fall due only up to the first input stored and not yet taken
      const cut = this.reader.ingestCut();
      commands.push(cut === null ? { session: true } : { session: true, dueBy: Math.floor(cut) });
      const checkpoint = this.checkpointCommand();
      if (checkpoint !== null) commands.push(checkpoint);
      const result = await this.turn(commands);
      // the term may have ended while the turn was computed (fenced, the lease lost, stopped)
      if (this.ended !== null && this.ended !== 'stopped') return;
      if (result.marked !== null) this.hashMarked(result.marked);
      // pipelined: this turn's append goes out now; the turn waits for the one before it, so the
      // next turn is planned while this one is in flight (at most two appends outstanding)
      if (result.transactions.length > 0) {
        const previous = this.pipeline.settled();
        void this.pipeline.send(result);
        await previous;
      }
      if (this.reader.waiting > 0) this.wake.notify();
      this.maybeSnapshot();
    } catch (err) {
      this.log.error({ err }, 'leader step failed: stepping down');
      this.finish('error');
    }
  }

  /** A turn's transactions are in the log: nodes that registered count as seen, and its decisions go to the outbox. */
  private adopted(result: TurnResult): void {
    this.thread.tick();
    for (const { tx } of result.transactions) {
      for (const e of tx.events) if (e.type === 'NodeRegistered') this.deps.heartbeats.touch(e.node.id);
    }
    this.outbox.push({ logged: result.transactions, state: result.state });
  }

  /**
   * Checkpoints without stalling a turn: when one is due, the turn marks the state (an empty
   * `checkpoint` transaction) and its hash is computed a slice at a time between turns; a later
   * turn appends the Checkpoint naming the marked sequence. Replicas and the auditor keep the
   * marked state until then (docs/events.md).
   */
  private checkpointCommand(): TurnCommand | null {
    const pending = this.checkpointing;
    if (pending !== null) {
      if (pending.stateHash === null) return null;
      this.checkpointing = null;
      return { checkpoint: { seq: pending.seq, stateHash: pending.stateHash } };
    }
    const every = this.deps.opts.checkpointEvery;
    const state = this.pipeline.tip.state;
    const due = every > 0 && state.seq - (state.lastCheckpoint?.seq ?? 0) >= every;
    return due ? { mark: true } : null;
  }

  /** Hashes a marked state off the turn, a slice at a time; the next turn after it is known appends the Checkpoint. */
  private hashMarked(marked: State): void {
    const mark: { seq: number; stateHash: string | null } = { seq: marked.seq, stateHash: null };
    this.checkpointing = mark;
    nativeStateHashInSlices(marked, this.ledger.hashCache).then(
      (stateHash) => {
        if (this.ended !== null) return;
        mark.stateHash = stateHash;
        this.wake.notify();
      },
      (err: unknown) => {
        this.log.error({ err }, 'checkpoint hash failed: stepping down');
        this.finish('error');
      },
    );
  }

  /**
   * The log, not the lease, keeps history linear: every third of a lease, checks that MUSTER_LOG
   * has not shrunk under this leader (against what was appended before asking: a turn may append
   * while the request is in flight). The lease itself is refreshed by the lease thread.
   */
  private async watchLogEnd(): Promise<void> {
    const log = this.log.child({ component: 'lease' });
    const signal = this.stopController.signal;
    const every = Math.max(20, Math.floor(this.deps.opts.leaseMs / 3));
    while (!signal.aborted) {
      await sleep(every, signal);
      if (signal.aborted) return;
      try {
        const appended = this.ledger.seq;
        // an answer with no stream leader behind it is a member's own copy (nats-server 2.9.10
        // answers so while the group has no leader), maybe a stale one: not evidence
        const { lastSeq: last, leader } = await streamInfo(this.deps.bus, LOG_STREAM);
        if (leader !== '' && last < appended) {
          log.error({ seq: appended, last, leader }, 'ALARM: MUSTER_LOG went backwards: stepping down');
          this.finish('error');
          return;
        }
      } catch (err) {
        log.debug({ err }, 'MUSTER_LOG\'s end could not be read');
      }
    }
  }

  private maybeSnapshot(): void {
    const { snapshotEvery: every, snapshotEveryEvents: everyEvents } = this.deps.opts;
    const ledger = this.ledger;
    if (every <= 0 || !this.snapshotsListed) return;
    const due = ledger.seq - ledger.snapshotSeq >= every || (everyEvents > 0 && ledger.eventsSinceSnapshot >= everyEvents && ledger.seq > ledger.snapshotSeq);
    if (!due) return;
    const state = ledger.state;
    const before = { seq: ledger.snapshotSeq, events: ledger.eventsSinceSnapshot };
    ledger.snapshotSeq = state.seq;
    ledger.eventsSinceSnapshot = 0;
    this.snapshotting = this.snapshotting.then(async () => {
      try {
        const hash = await nativeStateHashInSlices(state, ledger.hashCache);
        const info = await saveSnapshot(this.deps.bulkBus ?? this.deps.bus, { schema: STATE_SCHEMA, seq: state.seq, hash, state }, { cache: ledger.hashCache });
        this.log.info({ seq: info.seq, bytes: info.size }, 'snapshot saved');
      } catch (err) {
        this.log.warn({ err }, 'snapshot failed');
        // the next turn tries again
        if (ledger.snapshotSeq === state.seq) {
          ledger.snapshotSeq = before.seq;
          ledger.eventsSinceSnapshot += before.events;
        }
      }
    });
  }
}
