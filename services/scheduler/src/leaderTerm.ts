import type { Logger } from 'pino';
import {
  appendTransactions,
  lastInputSequence,
  lastLogSequence,
  encodeTransaction,
  lastPublishedLogSeq,
  nativeStateHashInSlices,
  publishDecisions,
  readInputs,
  readLog,
  saveSnapshot,
} from '@muster/bus';
import type { AppendResult, EncodedTransaction, InputMessage } from '@muster/bus';
import {
  STATE_SCHEMA,
  apply,
  copyOnWrite,
  decide,
  decisionMessages,
  fold,
  foldTransactions,
  heartbeatLost,
  ingest,
  makeTransaction,
  needsSession,
  nextDeadline,
  retirement,
  shardGet,
} from '@muster/core';
import type { LoggedTransaction, OutboundMessage, SchedulerEvent, Stamp, State, Transaction, TransactionKind } from '@muster/core';
import type { ReplicaDeps } from './replica.ts';
import { sleep } from './replica.ts';
import { runRestartable } from './restartable.ts';
import type { LeaseKeeper, WonLease } from './leaseKeeper.ts';
import type { Ledger } from './ledger.ts';
import { WakeSignal } from './wakeSignal.ts';

/** Transactions the log took, with the state after them (their decisions' jobs are looked up there). */
interface Adopted {
  logged: LoggedTransaction[];
  state: State;
}

/** The decision messages of transactions the log took, each job looked up in the state after them (a later transaction may have retired it). */
function messagesOf(adopted: readonly Adopted[]): OutboundMessage[] {
  return adopted.flatMap(({ logged, state }) => logged.flatMap(({ seq, tx }) => decisionMessages(seq, tx, (id) => shardGet(state.jobs, id))));
}

/** Why a leadership term ended. */
export type TermEnd = 'stopped' | 'fenced' | 'unknown-outcome' | 'lease-lost' | 'error';

// keep ingest transactions well under the bus's 1 MB limit
const MAX_INGEST_TX_BYTES = 400_000;
// ids in one JobsRetired: a few tens of kB, so the transaction stays small
const MAX_RETIRED_PER_TURN = 2000;
const IDLE_WAKE_MS = 250;
const INPUT_WATCHDOG_MS = 2000;

/**
 * One term of leadership: append LeaderElected (fenced), re-publish what the predecessor left
 * unpublished, then ingest inputs, run sessions, append fenced, publish, checkpoint and snapshot,
 * until the fence fails, the lease is lost, or the replica stops.
 */
export class LeaderTerm {
  private readonly wake = new WakeSignal();
  private readonly inputs: InputMessage[] = [];
  private readonly stopController = new AbortController();
  private ended: TermEnd | null = null;
  private inFlight: Promise<void> = Promise.resolve();
  // the last append sent: it resolves, after those before it, once its state is adopted (false: it failed)
  private appending: Promise<boolean> = Promise.resolve(true);
  // what the next turn plans on: the state and hash after the last transaction sent (acked or not)
  private tip: { state: State; lastHash: string | null };
  private unpublishedFrom: number | null = null;
  private publishCursorKnown = false;
  private inputsNext = 1;
  private inputsSeen = performance.now();
  private restartInputs: () => void = () => undefined;
  private snapshotting: Promise<void> = Promise.resolve();
  // decisions are published in log order while the next turns are planned: adopted transactions
  // wait in the outbox, and each round publishes all of them once the round before it is acked
  private readonly outbox: Adopted[] = [];
  private publishing: Promise<void> = Promise.resolve();
  private publishingActive = false;
  private lastSnapshotSeq = 0;
  private lastOverdueCheck = 0;
  // a checkpoint marked: its hash being computed (null), or known and waiting for the next turn
  private checkpointing: { seq: number; stateHash: string | null } | null = null;
  private readonly log: Logger;

  constructor(
    private readonly deps: ReplicaDeps,
    private readonly ledger: Ledger,
    private readonly won: WonLease,
    private readonly keeper: LeaseKeeper,
  ) {
    this.log = deps.log.child({ term: won.term });
    this.lastSnapshotSeq = ledger.seq;
    this.tip = { state: ledger.state, lastHash: ledger.lastHash };
  }

  /** Leads until the term ends; says why. */
  async run(): Promise<TermEnd> {
    try {
      return await this.lead();
    } catch (err) {
      this.log.error({ err }, 'leadership failed: stepping down');
      this.finish('error');
      return this.end();
    }
  }

  private async lead(): Promise<TermEnd> {
    const { opts } = this.deps;
    const log = this.log.child({ component: 'append' });
    // the catch-up after winning the lease may have folded a newer leader's term: never go back
    this.won.term = Math.max(this.won.term, this.ledger.state.term + 1);
    this.tip = { state: this.ledger.state, lastHash: this.ledger.lastHash };
    const election = this.plan(Math.max(opts.wallClock(), this.ledger.state.lastAt));
    election.add('election', [{ type: 'LeaderElected', term: this.won.term, leader: opts.id }]);
    const elected = await this.send(election);
    if (!elected) return this.end();
    log.info({ seq: this.ledger.seq, lastInputSeq: this.ledger.state.lastInputSeq }, 'elected: leading');
    this.deps.heartbeats.graceAll();
    this.inputsNext = this.ledger.state.lastInputSeq + 1;
    const readers = [this.readInputs(), this.watchInputs(), this.refreshLease()];
    while (this.ended === null) {
      const deadline = nextDeadline(this.tip.state);
      const wait = deadline === null ? IDLE_WAKE_MS : Math.min(IDLE_WAKE_MS, deadline - opts.wallClock());
      await this.wake.wait(wait);
      if (this.ended !== null) break;
      this.inFlight = this.step();
      await this.inFlight;
    }
    this.stopController.abort();
    await Promise.all(readers);
    await this.appending;
    await this.publishing;
    await this.snapshotting;
    if (this.ended === 'stopped') await this.keeper.release(this.won).catch(() => undefined);
    return this.end();
  }

  /** Ends the term after the transaction in flight. */
  async stop(): Promise<void> {
    this.finish('stopped');
    await this.inFlight;
    await this.appending;
    await this.publishing;
  }

  private end(): TermEnd {
    this.stopController.abort();
    return this.ended ?? 'fenced';
  }

  private finish(why: TermEnd): void {
    if (this.ended === null) this.ended = why;
    this.wake.notify();
  }

  /** One turn: publish what is owed, then ingest buffered inputs and facts, run a session, checkpoint. */
  private async step(): Promise<void> {
    // decisions go out in log order (a successor resumes after the last one published), so
    // nothing new is decided until what is owed has been published
    if (!(await this.catchUpPublishing())) return;
    try {
      const { opts } = this.deps;
      const batch = this.inputs.splice(0, opts.maxBatchInputs);
      const plan = this.plan(Math.max(opts.wallClock(), this.tip.state.lastAt));
      plan.ingest(batch);
      const now = performance.now();
      // scanning every node is not free: look for silent nodes about once a second
      if (now - this.lastOverdueCheck >= 1000) {
        this.lastOverdueCheck = now;
        plan.facts(this.deps.heartbeats.overdue(this.tip.state));
        plan.retire(opts.retainFinishedMs);
      }
      plan.session();
      this.checkpoint(plan);
      // pipelined: this turn's append goes out now; the turn waits for the one before it, so the
      // next turn is planned while this one is in flight (at most two appends outstanding)
      if (plan.logged.length > 0) {
        const previous = this.appending;
        this.appending = this.send(plan);
        await previous;
      }
      if (this.inputs.length > 0) this.wake.notify();
      this.maybeSnapshot();
    } catch (err) {
      this.log.error({ err }, 'leader step failed: stepping down');
      this.finish('error');
    }
  }

  /** A plan for this turn, chained onto the tip and stamped with this term. */
  private plan(at: number): Plan {
    return new Plan(this.tip.state, this.tip.lastHash, { term: this.won.term, leader: this.deps.opts.id, at });
  }

  /**
   * Sends a plan's transactions now, fenced on the sequence before them, and moves the tip past
   * them; the promise resolves after every earlier send, once the log took them (their state
   * adopted, their decisions queued for publishing), or false once this or an earlier one failed.
   */
  private send(plan: Plan): Promise<boolean> {
    const sent = appendTransactions(this.deps.js, plan.logged, plan.logged[0]!.seq - 1);
    this.tip = { state: plan.state, lastHash: plan.lastHash };
    const before = this.appending;
    return (async () => {
      const result = await sent;
      // a later append can only land if this one did: adopt in log order, or not at all
      if (!(await before)) return false;
      return this.adopt(plan, result);
    })();
  }

  /** On success adopts a sent plan's state and queues its decisions; on failure ends the term. */
  private adopt(plan: Plan, result: AppendResult): boolean {
    if (!result.ok) {
      const log = this.log.child({ component: 'append' });
      log.warn({ code: result.code, committed: result.committed.length, of: plan.logged.length, err: result.cause }, 'append failed: stepping down');
      this.finish(result.code === 'conflict' ? 'fenced' : result.code === 'timeout' ? 'unknown-outcome' : 'error');
      return false;
    }
    // the fence held, so the log now holds exactly what the plan folded
    this.ledger.state = plan.state;
    this.ledger.lastHash = plan.lastHash;
    for (const { tx } of plan.logged) {
      for (const e of tx.events) if (e.type === 'NodeRegistered') this.deps.heartbeats.touch(e.node.id);
    }
    // published behind the rounds before it, without holding up the next turn
    this.outbox.push({ logged: plan.logged, state: plan.state });
    if (!this.publishingActive) {
      this.publishingActive = true;
      this.publishing = this.drainOutbox();
    }
    return true;
  }

  /**
   * Checkpoints without stalling a turn: when one is due, the plan marks the state (an empty
   * `checkpoint` transaction) and its hash is computed a slice at a time between turns; a later
   * turn appends the Checkpoint naming the marked sequence. Replicas and the auditor keep the
   * marked state until then (docs/events.md).
   */
  private checkpoint(plan: Plan): void {
    const pending = this.checkpointing;
    if (pending !== null) {
      if (pending.stateHash === null) return;
      this.checkpointing = null;
      plan.checkpoint(pending.seq, pending.stateHash);
      return;
    }
    if (!plan.checkpointDue(this.deps.opts.checkpointEvery)) return;
    const marked = plan.markCheckpoint();
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
   * Publishes the outbox in rounds until it is empty: each round takes everything adopted so far,
   * so a leader taking many small turns still needs only one ack round trip per round. A round
   * that fails, or follows decisions owed, is left to the catch-up, which publishes in log order.
   */
  private async drainOutbox(): Promise<void> {
    try {
      while (this.outbox.length > 0) {
        const round = this.outbox.splice(0);
        const published = this.unpublishedFrom === null && (await this.publishRound(round));
        if (!published) this.unpublishedFrom = Math.min(this.unpublishedFrom ?? Infinity, round[0]!.logged[0]!.seq);
      }
    } finally {
      this.publishingActive = false;
    }
  }

  /** Publishes the decision messages of one round; false (and a warning) when not every one was acked. */
  private async publishRound(round: readonly Adopted[]): Promise<boolean> {
    const msgs = messagesOf(round);
    if (msgs.length === 0) return true;
    try {
      const r = await publishDecisions(this.deps.nc, msgs);
      if (r.ok) return true;
      this.log.warn({ code: r.code, err: r.cause }, 'decisions not all published: will re-publish');
    } catch (err) {
      this.log.warn({ err }, 'publishing decisions failed: will re-publish');
    }
    return false;
  }

  /** Publishes what earlier leaders (or failed publishes of this one) left owed; false when it could not yet. */
  private async catchUpPublishing(): Promise<boolean> {
    try {
      // the log up to the ledger is re-published: every append sent must be adopted first
      if (this.unpublishedFrom !== null && !(await this.appending)) return false;
      if (this.unpublishedFrom !== null) await this.publishing;
      if (!this.publishCursorKnown) {
        this.unpublishedFrom = Math.max(1, await lastPublishedLogSeq(this.deps.jsm));
        this.publishCursorKnown = true;
      }
      if (this.unpublishedFrom !== null) await this.republish(this.unpublishedFrom);
      return true;
    } catch (err) {
      this.log.warn({ err }, 'decisions owed could not be published yet: retrying');
      return false;
    }
  }

  /** Re-publishes the decisions of the log from `fromSeq` (the msg ids make repeats harmless). */
  private async republish(fromSeq: number): Promise<void> {
    if (fromSeq <= this.ledger.seq) {
      const txs: LoggedTransaction[] = [];
      for await (const logged of readLog(this.deps.js, { fromSeq, verifyChain: false })) {
        if (logged.seq > this.ledger.seq) break;
        txs.push(logged);
      }
      const msgs = messagesOf([{ logged: txs, state: this.ledger.state }]);
      if (msgs.length > 0) {
        const r = await publishDecisions(this.deps.nc, msgs);
        if (!r.ok) throw new Error(`re-publishing decisions failed: ${r.code}`);
        this.log.info({ fromSeq, messages: msgs.length }, 're-published decisions');
      }
    }
    this.unpublishedFrom = null;
  }

  /**
   * Reads MUSTER_IN from the input after the last one ingested or buffered, into the buffer. A
   * failed read (a NATS node restarting, a consumer lost) is retried from where it stopped: inputs
   * are never skipped, and the buffer never holds one twice.
   */
  private async readInputs(): Promise<void> {
    const log = this.log.child({ component: 'ingest' });
    const signal = this.stopController.signal;
    let next = this.ledger.state.lastInputSeq + 1;
    // one attempt per consumer: the watchdog restarts an attempt that silently stopped delivering
    await runRestartable(
      signal,
      (restart) => {
        this.restartInputs = restart;
      },
      async (attempt) => {
        for await (const input of readInputs(this.deps.js, { fromSeq: next, tail: true, signal: attempt })) {
          this.inputsSeen = performance.now();
          if (input.seq < next) continue;
          next = input.seq + 1;
          this.inputsNext = next;
          this.inputs.push(input);
          this.wake.notify();
        }
      },
      async (err) => {
        log.warn({ err, next }, 'input reader failed: retrying');
        await sleep(250, signal);
      },
    );
  }

  /**
   * Restarts the input reader when MUSTER_IN holds inputs past what it delivered and it has been
   * silent for a while (an ordered consumer can stall without an error when a NATS node restarts).
   */
  private async watchInputs(): Promise<void> {
    const signal = this.stopController.signal;
    while (!signal.aborted) {
      await sleep(INPUT_WATCHDOG_MS, signal);
      if (signal.aborted) return;
      try {
        const last = await lastInputSequence(this.deps.jsm);
        if (last >= this.inputsNext && performance.now() - this.inputsSeen > INPUT_WATCHDOG_MS) {
          this.log.warn({ next: this.inputsNext, last }, 'input reader stalled: restarting it');
          this.inputsSeen = performance.now();
          this.restartInputs();
        }
      } catch (err) {
        this.log.debug({ err }, 'input watchdog could not read MUSTER_IN');
      }
    }
  }

  private async refreshLease(): Promise<void> {
    const log = this.log.child({ component: 'lease' });
    const signal = this.stopController.signal;
    const every = Math.max(20, Math.floor(this.deps.opts.leaseMs / 3));
    while (!signal.aborted) {
      await sleep(every, signal);
      if (signal.aborted) return;
      try {
        const r = await this.keeper.refresh(this.won);
        if (r === false) {
          log.warn('lease taken by another replica: stepping down');
          this.finish('lease-lost');
          return;
        }
        // the log, not the lease, keeps history linear: check it has not shrunk under us (against
        // what was appended before asking: a turn may append while the request is in flight)
        const appended = this.ledger.seq;
        const last = await lastLogSequence(this.deps.jsm);
        if (last < appended) {
          log.error({ seq: appended, last }, 'ALARM: MUSTER_LOG went backwards: stepping down');
          this.finish('error');
          return;
        }
      } catch (err) {
        log.warn({ err }, 'lease refresh failed');
      }
    }
  }

  private maybeSnapshot(): void {
    const every = this.deps.opts.snapshotEvery;
    if (every <= 0 || this.ledger.seq - this.lastSnapshotSeq < every) return;
    const state = this.ledger.state;
    this.lastSnapshotSeq = state.seq;
    this.snapshotting = this.snapshotting.then(async () => {
      try {
        const hash = await nativeStateHashInSlices(state, this.ledger.hashCache);
        const info = await saveSnapshot(this.deps.bulkJs ?? this.deps.js, { schema: STATE_SCHEMA, seq: state.seq, hash, state }, { cache: this.ledger.hashCache });
        this.log.info({ seq: info.seq, bytes: info.size }, 'snapshot saved');
      } catch (err) {
        this.log.warn({ err }, 'snapshot failed');
      }
    });
  }
}

/**
 * The transactions of one leader turn, chained and stamped as they will be appended, each folded
 * as it is planned (so the session sees the ingested inputs) with the same core the replay uses.
 * When the append lands, `state` is exactly the fold of the log.
 */
class Plan {
  /** The transactions planned, each serialised and hashed once (what the append sends). */
  readonly logged: (LoggedTransaction & EncodedTransaction)[] = [];

  constructor(
    public state: State,
    public lastHash: string | null,
    private readonly stamp: { term: number; leader: string; at: number },
  ) {}

  ingest(inputs: InputMessage[]): void {
    const txs: SchedulerEvent[][] = [];
    // each input is ingested against the state its predecessors in the batch left: one scratch
    // copy-on-write run over the batch (dropped after; `add` folds the transactions for real)
    copyOnWrite(this.state, (scratch) => {
      scratch.lastAt = Math.max(scratch.lastAt, this.stamp.at);
      let events: SchedulerEvent[] = [];
      let bytes = 0;
      for (const input of inputs) {
        const produced = ingest(scratch, { seq: input.seq, subject: input.subject, data: input.data }, this.stamp.at);
        for (const event of produced) apply(scratch, event);
        const size = JSON.stringify(produced).length;
        if (events.length > 0 && bytes + size > MAX_INGEST_TX_BYTES) {
          txs.push(events);
          events = [];
          bytes = 0;
        }
        events.push(...produced);
        bytes += size;
      }
      if (events.length > 0) txs.push(events);
    }, { freeze: false });
    for (const events of txs) this.add('ingest', events);
  }

  facts(lostNodes: string[]): void {
    const events: SchedulerEvent[] = [];
    // each loss is decided against the state the losses before it left; `add` folds them for real
    let scratch = this.state;
    for (const nodeId of lostNodes) {
      const produced = heartbeatLost(scratch, nodeId, this.stamp.at);
      if (produced.length === 0) continue;
      scratch = fold(scratch, produced);
      events.push(...produced);
    }
    if (events.length > 0) this.add('fact', events);
  }

  /** Retires the finished jobs whose retention has passed (a fact transaction; a bounded batch per turn). */
  retire(retainMs: number): void {
    const event = retirement(this.state, this.stamp.at, retainMs, MAX_RETIRED_PER_TURN);
    if (event !== null) this.add('fact', [event]);
  }

  session(): void {
    if (!needsSession(this.state, this.stamp.at)) return;
    const parts = decide(this.state, this.stamp.at);
    const session = this.state.session + 1;
    parts.forEach((events, i) => this.add('session', events, session, i + 1, parts.length));
  }

  /** Whether `every` transactions or more went by since the last Checkpoint (never when `every` is 0). */
  checkpointDue(every: number): boolean {
    return every > 0 && this.state.seq - (this.state.lastCheckpoint?.seq ?? 0) >= every;
  }

  /** Marks the state a Checkpoint will hash: an empty `checkpoint` transaction; returns the state after it. */
  markCheckpoint(): State {
    this.add('checkpoint', []);
    return this.state;
  }

  /** The Checkpoint of the state marked at `seq`, once its hash is known. */
  checkpoint(seq: number, stateHash: string): void {
    this.add('checkpoint', [{ type: 'Checkpoint', seq, stateHash }]);
  }

  /** Chains, stamps and folds one transaction. */
  add(kind: TransactionKind, events: SchedulerEvent[], session = this.state.session, part = 1, parts = 1): void {
    const stamp: Stamp = { kind, ...this.stamp, session, part, parts };
    const tx: Transaction = makeTransaction(this.lastHash, stamp, events);
    const seq = this.state.seq + 1;
    this.state = foldTransactions(this.state, [{ seq, tx }]);
    const encoded = encodeTransaction(tx);
    this.lastHash = encoded.hash;
    this.logged.push({ seq, ...encoded });
  }
}
