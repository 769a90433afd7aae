import { nativeStateHash, payloadHash } from '@muster/bus';
import {
  CanonicalCache,
  TurnContext,
  checkpointedState,
  decisionMessages,
  fold,
  foldTransactions,
  initialState,
  isCheckpointMark,
  isDecision,
  retireProblem,
  shardGet,
  turn,
} from '@muster/core';
import type { Input, JobsRetired, SchedulerEvent, State, Transaction, TurnCommand } from '@muster/core';
import type { CheckName, Divergence } from './auditReport.ts';
import type { ChainBreak } from './chainVerifier.ts';
import { ChainVerifier } from './chainVerifier.ts';
import type { DecisionsCheck } from './decisionsCheck.ts';
import { firstDifference, sameJson } from './eventDiff.ts';
import { FailureLog } from './failureLog.ts';
import { InputCursor } from './inputCursor.ts';
import { InvariantChecker } from './invariantChecker.ts';

/** A stored snapshot to compare with the replay at its sequence; `problem` when its own bytes do not check out. */
export interface SnapshotCheck {
  name: string;
  seq: number;
  hash: string;
  problem: string | null;
}

/** The events of one input in an ingest transaction (`from`..`to`), and the input (null: not available). */
export interface IngestGroup {
  from: number;
  to: number;
  input: Input | null;
}

/**
 * The re-derivation of one transaction, handed to a helper thread: the session it starts (or
 * continues, when the helper started it), or its inputs, grouped and read by the main thread.
 */
export type HandedWork = { kind: 'session' } | { kind: 'ingest'; groups: IngestGroup[] };

/**
 * A thread that folds the same log and takes re-derivations over when it has room (the worker of a
 * parallel audit), as the main thread's auditor sees it.
 */
export interface Helper {
  /** Whether it keeps up well enough to be given more work now. */
  hasRoom(): boolean;
  /** Hands on every transaction, in order (its stored bytes), with the work it takes over, if any. */
  hand(seq: number, payload: Uint8Array, work: HandedWork | null): void;
}

/** What a `LogAuditor` reads besides the log. */
export interface LogAuditorDeps {
  /** A helper thread to hand re-derivations to when it has room (transactions read from NATS only). */
  helper?: Helper | null;
  /** First sequence to check; earlier transactions are folded (and chained) only. */
  fromSeq: number;
  /** Opens the inputs from a MUSTER_IN sequence on (in batches), or null when no inputs are available. */
  openInputs: ((fromSeq: number) => AsyncIterator<readonly Input[]>) | null;
  /** Stored snapshots by log sequence. */
  snapshots: ReadonlyMap<number, readonly SnapshotCheck[]>;
  /** The decisions stream comparison, or null (offline). */
  decisions: DecisionsCheck | null;
}

/** A session whose later parts are still to come. */
interface OpenSession {
  session: number;
  parts: number;
  next: number;
  /** The re-derived parts; null when another thread re-derives this session. */
  derived: SchedulerEvent[][] | null;
}

/**
 * Replays a log transaction by transaction with the core's own folds (each result frozen and
 * shared structurally, so a turn may start from any of them), and checks each one: the hash chain,
 * stamps and fencing, its re-derivation by the core's turn on the state before it (sessions, ingest
 * from the inputs, heartbeat losses; retirements by the retirement rules), checkpoints and
 * snapshots against the replayed state, the invariants, and the decision messages it leads to.
 */
export class LogAuditor {
  /** The state after the last folded transaction. */
  state: State = initialState();
  readonly failures = new FailureLog();
  // the folded states are frozen and share unchanged leaves: each hash serialises what changed
  private readonly hashCache = new CanonicalCache();
  // the turn re-derives what the leader wrote; its caches are this auditor's
  private readonly context = new TurnContext({ digest: payloadHash });
  readonly invariants = new InvariantChecker((v) => this.failures.add({ seq: v.seq, check: 'invariant', message: `${v.rule}: ${v.message}` }));
  readonly counts = {
    transactions: 0,
    events: 0,
    sessions: 0,
    sessionsCutShort: 0,
    decisionsRederived: 0,
    eventsRederived: 0,
    divergences: 0,
    checkpointsChecked: 0,
    checkpointsFailed: 0,
    snapshotsChecked: 0,
    snapshotsFailed: 0,
    inputsRederived: 0,
    inputsStructural: 0,
    inputsLost: 0,
  };
  /** Milliseconds spent re-deriving sessions (`decide`), inputs (`ingest`) and hashing states. */
  readonly timings = { decideMs: 0, ingestMs: 0, hashMs: 0 };
  chainBreak: ChainBreak | null = null;
  divergence: Divergence | null = null;
  /** The last sequence folded. */
  lastSeq = 0;
  private readonly chain = new ChainVerifier();
  private open: OpenSession | null = null;
  // the state after the last checkpoint mark, kept until a Checkpoint names it
  private marked: State | null = null;
  private cursor: InputCursor | null = null;

  // false for a helper: what is wrong with the log's structure is the main thread's to report
  private readonly reportsStructure: boolean;

  /** `helped`: this auditor is a helper thread's, which only folds and makes the re-derivations handed to it (`handed`). */
  constructor(
    private readonly deps: LogAuditorDeps,
    helped = false,
  ) {
    this.reportsStructure = !helped;
  }

  /** Folds and checks the next transaction of the log (`payload`: its stored bytes, when read from NATS). */
  async transaction(seq: number, tx: Transaction, payload?: Uint8Array): Promise<void> {
    const broken = this.chain.check(seq, tx, payload);
    if (broken !== null) this.breakChain(broken);
    const audited = seq >= this.deps.fromSeq;
    this.invariants.beforeTransaction(seq, audited, this.state, tx.events);
    this.lastSeq = seq;
    // the helper folds every transaction; it is handed each one as soon as what it takes over is known
    const helper = payload === undefined ? null : (this.deps.helper ?? null);
    if (!audited) {
      helper?.hand(seq, payload!, null);
      this.foldWhole(seq, tx);
      this.noteMark(tx);
      this.snapshotAt(seq);
      return;
    }
    this.counts.transactions++;
    this.counts.events += tx.events.length;
    this.checkStamp(seq, tx);
    this.settleOpenSession(seq, tx);
    if (tx.kind === 'ingest') {
      await this.ingest(seq, tx, helper, payload);
    } else if (tx.kind === 'session') {
      // a session goes to the helper whole (it compares its later parts with what it derived)
      const handed = helper !== null && (this.open === null ? tx.part === 1 && helper.hasRoom() : this.open.derived === null);
      helper?.hand(seq, payload!, handed ? { kind: 'session' } : null);
      this.session(seq, tx, !handed);
    } else {
      helper?.hand(seq, payload!, null);
      this.checkOther(seq, tx);
    }
    this.invariants.afterTransaction(this.state);
    this.deps.decisions?.fromLog(decisionMessages(seq, tx, (id) => shardGet(this.state.jobs, id), (id) => shardGet(this.state.nodes, id)));
    this.snapshotAt(seq);
  }

  /**
   * A helper's share of the next transaction: folded, the re-derivation handed to it made (a
   * session started or continued, inputs), and its decision messages compared when it was given
   * the decisions stream; everything else is the main thread's.
   */
  handed(seq: number, tx: Transaction, work: HandedWork | null): void {
    this.lastSeq = seq;
    if (seq < this.deps.fromSeq) {
      this.foldWhole(seq, tx);
      return;
    }
    this.settleOpenSession(seq, tx);
    if (tx.kind === 'session') this.session(seq, tx, work?.kind === 'session');
    else if (tx.kind === 'ingest' && work?.kind === 'ingest') this.foldIngest(seq, tx, work.groups);
    else this.foldWhole(seq, tx);
    this.deps.decisions?.fromLog(decisionMessages(seq, tx, (id) => shardGet(this.state.jobs, id), (id) => shardGet(this.state.nodes, id)));
  }

  private checkOther(seq: number, tx: Transaction): void {
    switch (tx.kind) {
      case 'fact':
        this.fact(seq, tx);
        break;
      case 'election':
        this.election(seq, tx);
        break;
      case 'checkpoint':
        this.checkpoint(seq, tx);
        break;
      default:
        this.fail(seq, 'structure', `transaction ${seq} has unknown kind ${JSON.stringify(tx.kind)}`);
        this.foldWhole(seq, tx);
    }
  }

  /** Ends the replay: a session still open was cut short by the end of the log; stops reading inputs. */
  async finish(): Promise<void> {
    if (this.open !== null && this.reportsStructure) this.counts.sessionsCutShort++;
    this.open = null;
    await this.cursor?.close();
  }

  /** The canonical hash of a state (default: the current one), with Node's native SHA-256 (timed: on a large state it is the costliest check). */
  hash(state: State = this.state): string {
    const started = performance.now();
    const hash = nativeStateHash(state, this.hashCache);
    this.timings.hashMs += performance.now() - started;
    return hash;
  }

  /** Records that the log cannot be read past `seq` (a message that is not a transaction). */
  breakChain(broken: ChainBreak): void {
    this.chainBreak ??= broken;
    this.fail(broken.seq, 'chain', broken.message);
  }

  /** Records a failure found outside the replay (reading the log, the decisions stream). */
  fail(seq: number, check: CheckName, message: string): void {
    this.failures.add({ seq, check, message });
  }

  private foldWhole(seq: number, tx: Transaction): void {
    this.state = foldTransactions(this.state, [{ seq, tx }]);
  }

  private checkStamp(seq: number, tx: Transaction): void {
    const s = this.state;
    if (tx.at < s.lastAt) this.fail(seq, 'time', `transaction ${seq} is stamped ${tx.at}, before the log's last stamp ${s.lastAt}`);
    if (tx.kind !== 'election' && s.leader !== null && (tx.term !== s.term || tx.leader !== s.leader)) {
      this.fail(seq, 'fencing', `transaction ${seq} was written by ${tx.leader} in term ${tx.term}, but ${s.leader} leads term ${s.term}`);
    }
  }

  // A session's parts follow one another; anything else after an unfinished session must be a new
  // leader's LeaderElected (the old one died mid-session, and each part it wrote is consistent).
  private settleOpenSession(seq: number, tx: Transaction): void {
    const open = this.open;
    if (open === null || (tx.kind === 'session' && tx.session === open.session && tx.part === open.next)) return;
    this.open = null;
    if (!this.reportsStructure) return;
    if (tx.kind === 'election') {
      this.counts.sessionsCutShort++;
      return;
    }
    this.fail(seq, 'session', `session ${open.session} stopped after part ${open.next - 1} of ${open.parts}, and transaction ${seq} (${tx.kind}) follows instead of part ${open.next} or a LeaderElected`);
  }

  // `derive`: whether this thread re-derives the session, if the transaction starts one
  private session(seq: number, tx: Transaction, derive: boolean): void {
    const open = this.open;
    // the structure of sessions is checked (and counted) by the thread that checks everything else
    const structure = this.reportsStructure;
    let derived: SchedulerEvent[] | null;
    if (open !== null) {
      if (structure && tx.parts !== open.parts) this.fail(seq, 'session', `part ${tx.part} of session ${tx.session} announces ${tx.parts} parts, part 1 announced ${open.parts}`);
      derived = open.derived === null ? null : (open.derived[tx.part - 1] ?? []);
      open.next++;
      if (open.next > open.parts) this.open = null;
    } else if (tx.part !== 1) {
      if (structure) this.fail(seq, 'session', `transaction ${seq} is part ${tx.part} of session ${tx.session}, whose earlier parts are not before it`);
      this.foldWhole(seq, tx);
      return;
    } else {
      if (structure) this.counts.sessions++;
      let parts: SchedulerEvent[][] | null = null;
      if (derive) {
        // decide reads the state as the leader had it: after the transaction before, before this one
        const started = performance.now();
        // with the time deadlines fell due by, as the leader wrote it (SessionStarted.dueBy)
        const first = tx.events[0];
        const dueBy = first?.type === 'SessionStarted' ? first.dueBy : undefined;
        parts = this.rederive(seq, this.state, tx, [dueBy === undefined ? { session: true } : { session: true, dueBy }]);
        this.timings.decideMs += performance.now() - started;
        if (parts !== null && parts.length !== tx.parts) this.fail(seq, 'session', `session ${tx.session} announces ${tx.parts} part(s); re-deriving it gives ${parts.length}`);
      }
      derived = parts === null ? null : (parts[0] ?? []);
      if (tx.parts > 1) this.open = { session: tx.session, parts: tx.parts, next: 2, derived: parts };
    }
    if (derived !== null) this.compare(seq, tx, derived, 0, tx.events.length);
    this.foldWhole(seq, tx);
  }

  // The inputs are read first (reading MUSTER_IN is asynchronous; one await for the whole
  // transaction), then the transaction is folded in one synchronous copy-on-write run, each input
  // re-derived by `ingest` on the state as its predecessors in the transaction left it, as the
  // leader did it.
  // The main thread reads and groups the inputs, and checks that each is ingested once, in order;
  // the re-derivation is the helper's when it has room.
  private async ingest(seq: number, tx: Transaction, helper: Helper | null, payload: Uint8Array | undefined): Promise<void> {
    const events = tx.events;
    await this.readInputsUpTo(lastInputSeqOf(events));
    const groups: IngestGroup[] = [];
    let lastInputSeq = this.state.lastInputSeq;
    let i = 0;
    while (i < events.length) {
      const inputSeq = inputSeqOf(events[i]!);
      if (inputSeq === null) {
        this.fail(seq, 'structure', `event ${i} (${events[i]!.type}) of ingest transaction ${seq} names no input, yet no earlier event of its input precedes it`);
        groups.push({ from: i, to: events.length, input: null });
        break;
      }
      // an input's events: the one that names it, then its consequences (which name none)
      let to = i + 1;
      while (to < events.length && inputSeqOf(events[to]!) === null) to++;
      let input: Input | null = null;
      if (inputSeq <= lastInputSeq) {
        this.fail(seq, 'exactly-once', `transaction ${seq} ingests input ${inputSeq}, but the log had already ingested up to input ${lastInputSeq}`);
      } else {
        input = this.input(seq, inputSeq);
        lastInputSeq = inputSeq;
      }
      if (input === null) this.counts.inputsStructural++;
      else this.counts.inputsRederived++;
      groups.push({ from: i, to, input });
      i = to;
    }
    const handed = helper !== null && groups.some((g) => g.input !== null) && helper.hasRoom();
    helper?.hand(seq, payload!, handed ? { kind: 'ingest', groups } : null);
    if (handed) this.foldWhole(seq, tx);
    else this.foldIngest(seq, tx, groups);
  }

  /**
   * Folds an ingest transaction, its inputs re-derived by the turn on the state before it: all in
   * one turn when every input is at hand, else each one on the state the log's events of its
   * predecessors left (an input that is not at hand is folded, not re-derived).
   */
  private foldIngest(seq: number, tx: Transaction, groups: readonly IngestGroup[]): void {
    const started = performance.now();
    if (groups.every((g) => g.input !== null)) {
      const derived = this.rederive(seq, this.state, tx, [{ inputs: groups.map((g) => g.input!) }])?.flat() ?? null;
      this.timings.ingestMs += performance.now() - started;
      this.compare(seq, tx, derived, 0, tx.events.length);
      this.foldWhole(seq, tx);
      return;
    }
    let state = this.opened(seq, tx);
    for (const { from, to, input } of groups) {
      const events = tx.events.slice(from, to);
      if (input !== null) this.compare(seq, tx, this.rederive(seq, state, tx, [{ inputs: [input] }])?.flat() ?? null, from, to);
      state = fold(state, events);
    }
    this.timings.ingestMs += performance.now() - started;
    this.state = state;
  }

  /**
   * The events the core's turn writes on `state` for `commands`, stamped as `tx` was: one list per
   * transaction; null when the turn threw. The core throws only on a state no log it wrote can
   * lead to (a log written again over another history folds to one: docs/drills.md, the 15-minute
   * soak), so that is reported as a divergence at `seq`, and the audit goes on.
   */
  private rederive(seq: number, state: State, tx: Transaction, commands: TurnCommand[]): SchedulerEvent[][] | null {
    try {
      return turn(this.context, state, tx.prev, commands, { term: tx.term, leader: tx.leader, at: tx.at }).transactions.map((t) => t.tx.events);
    } catch (err) {
      const what = tx.kind === 'session' ? `session ${tx.session} part ${tx.part}` : `${tx.kind} transaction`;
      this.divergeWhole(seq, tx, `${what} at ${seq} cannot be re-derived: the core threw on the state before it (${(err as Error).message}), a state no log the core wrote leads to`);
      return null;
    }
  }

  /** The state with transaction `seq`'s envelope applied and none of its events yet. */
  private opened(seq: number, tx: Transaction): State {
    return foldTransactions(this.state, [{ seq, tx: { ...tx, events: [] } }]);
  }

  /** Has the inputs up to MUSTER_IN sequence `last` in hand (no-op without inputs, or when none is new). */
  private async readInputsUpTo(last: number): Promise<void> {
    const open = this.deps.openInputs;
    if (open === null || last <= this.state.lastInputSeq) return;
    this.cursor ??= new InputCursor(open(this.state.lastInputSeq + 1));
    await this.cursor.reach(last);
  }

  private input(seq: number, inputSeq: number): Input | null {
    if (this.cursor === null) return null;
    const { input, passed } = this.cursor.take(inputSeq);
    for (const p of passed) {
      this.counts.inputsLost++;
      this.fail(seq, 'exactly-once', `input ${p.seq} (${p.subject}) is on MUSTER_IN but the log never ingested it; transaction ${seq} goes on to input ${inputSeq}`);
    }
    return input;
  }

  // A fact transaction holds heartbeat losses (each re-derived by the turn on the state the
  // events before it left), retirements (the leader's to time, checked by the retirement rules)
  // and a new log's policy defaults (re-derived by the turn's start).
  private fact(seq: number, tx: Transaction): void {
    const events = tx.events;
    let state = this.opened(seq, tx);
    let i = 0;
    while (i < events.length) {
      const first = events[i]!;
      if (first.type === 'JobsRetired') {
        this.retired(seq, tx, state, first);
        state = fold(state, [first]);
        i++;
        continue;
      }
      if (first.type === 'PolicySet' && first.inputSeq === undefined) {
        // only a new log's start writes a policy of its own: the v1.1 defaults, and since contract
        // v1.2 the ContractSet after it; a log started before v1.2 has the policy alone
        const to = events[i + 1]?.type === 'ContractSet' ? i + 2 : i + 1;
        const derived = this.rederive(seq, state, tx, [{ start: true }])?.flat() ?? null;
        this.compare(seq, tx, derived === null ? null : derived.slice(0, to - i), i, to);
        state = fold(state, events.slice(i, to));
        i = to;
        continue;
      }
      if (first.type !== 'NodeLost' || first.cause !== 'heartbeat' || first.inputSeq !== undefined) {
        this.fail(seq, 'structure', `event ${i} (${first.type}) of fact transaction ${seq} is not a heartbeat NodeLost or one of its consequences`);
        state = fold(state, events.slice(i));
        break;
      }
      let to = i + 1;
      while (to < events.length && events[to]!.type !== 'NodeLost') to++;
      this.compare(seq, tx, this.rederive(seq, state, tx, [{ lostNodes: [first.nodeId] }])?.flat() ?? null, i, to);
      state = fold(state, events.slice(i, to));
      i = to;
    }
    this.state = state;
  }

  /** A retirement is the leader's to time, but each job in it must be finished long enough and hold nothing. */
  private retired(seq: number, tx: Transaction, before: State, event: JobsRetired): void {
    if (event.at !== tx.at) this.fail(seq, 'fact', `JobsRetired in transaction ${seq} is stamped ${event.at}, not the transaction's ${tx.at}`);
    for (const id of event.jobIds) {
      const problem = retireProblem(before, id, event.at, event.retainMs);
      if (problem !== null) this.fail(seq, 'fact', `JobsRetired in transaction ${seq}: ${problem}`);
    }
  }

  private election(seq: number, tx: Transaction): void {
    const elected = tx.events[0];
    if (tx.events.length !== 1 || elected?.type !== 'LeaderElected') {
      this.fail(seq, 'structure', `election transaction ${seq} must hold exactly one LeaderElected`);
    } else if (elected.term !== tx.term || elected.leader !== tx.leader) {
      this.fail(seq, 'fencing', `LeaderElected in transaction ${seq} names ${elected.leader} term ${elected.term}, but the transaction was written by ${tx.leader} term ${tx.term}`);
    } else if (elected.term <= this.state.term) {
      this.fail(seq, 'fencing', `LeaderElected in transaction ${seq} is for term ${elected.term}, not after term ${this.state.term}`);
    }
    this.foldWhole(seq, tx);
  }

  // A Checkpoint hashes the state after the transaction before it, or after the last checkpoint
  // mark (an empty checkpoint transaction): hash before this one is folded.
  private checkpoint(seq: number, tx: Transaction): void {
    for (const event of tx.events) {
      if (event.type !== 'Checkpoint') {
        this.fail(seq, 'structure', `checkpoint transaction ${seq} holds a ${event.type}`);
        continue;
      }
      this.counts.checkpointsChecked++;
      const named = checkpointedState(event, this.state, this.marked);
      if (named === null) {
        this.counts.checkpointsFailed++;
        const mark = this.marked === null ? 'no checkpoint mark is open' : `the open checkpoint mark is at ${this.marked.seq}`;
        this.fail(seq, 'checkpoint', `the Checkpoint in transaction ${seq} is for the state after ${event.seq}, but it follows transaction ${this.state.seq} and ${mark}`);
        continue;
      }
      const hash = this.hash(named);
      if (hash !== event.stateHash) {
        this.counts.checkpointsFailed++;
        this.fail(seq, 'checkpoint', `the Checkpoint in transaction ${seq} says the state after ${event.seq} hashes to ${short(event.stateHash)}; replay gives ${short(hash)}`);
      }
    }
    this.foldWhole(seq, tx);
    this.noteMark(tx);
  }

  /** After folding a checkpoint mark (an empty checkpoint transaction), keeps the state it marks for the Checkpoint that will name it. */
  private noteMark(tx: Transaction): void {
    if (isCheckpointMark(tx)) this.marked = this.state;
  }

  private snapshotAt(seq: number): void {
    const records = this.deps.snapshots.get(seq);
    if (records === undefined) return;
    const hash = this.hash();
    for (const r of records) {
      this.counts.snapshotsChecked++;
      const problem = r.problem ?? (r.hash === hash ? null : `snapshot ${r.name} at ${seq} records hash ${short(r.hash)}; the replayed state at ${seq} hashes to ${short(hash)}`);
      if (problem !== null) {
        this.counts.snapshotsFailed++;
        this.fail(seq, 'snapshot', problem);
      }
    }
  }

  /** Compares re-derived events with the log's events `from`..`to` of `tx`; counts what matched. */
  private compare(seq: number, tx: Transaction, derived: readonly SchedulerEvent[] | null, from: number, to: number): void {
    // not re-derivable: already reported
    if (derived === null) return;
    const events = tx.events;
    const n = Math.max(derived.length, to - from);
    for (let k = 0; k < n; k++) {
      const expected = derived[k] ?? null;
      const actual = from + k < to ? events[from + k]! : null;
      if (expected === null || actual === null || !sameJson(expected, actual)) {
        this.diverge(seq, tx, from + k, expected, actual);
        return;
      }
    }
    this.counts.eventsRederived += derived.length;
    for (const e of derived) if (isDecision(e)) this.counts.decisionsRederived++;
  }

  /** A divergence of a transaction as a whole (its re-derivation failed), at its first event. */
  private divergeWhole(seq: number, tx: Transaction, message: string): void {
    this.counts.divergences++;
    this.fail(seq, tx.kind === 'session' ? 'session' : tx.kind === 'fact' ? 'fact' : 'ingest', message);
    if (this.divergence !== null) return;
    this.divergence = { seq, index: 0, kind: tx.kind, ...(tx.kind === 'session' ? { session: tx.session, part: tx.part } : {}), expected: null, actual: tx.events[0] ?? null, path: '', message };
  }

  private diverge(seq: number, tx: Transaction, index: number, expected: SchedulerEvent | null, actual: SchedulerEvent | null): void {
    this.counts.divergences++;
    const what = tx.kind === 'session' ? `session ${tx.session} part ${tx.part}` : `${tx.kind} transaction`;
    const path = expected === null || actual === null ? '' : (firstDifference(expected, actual) ?? '');
    const other = otherSubmission(expected, actual);
    const message = expected === null
      ? `event ${index} of ${what} at ${seq} (${actual?.type}) does not follow from the state before it`
      : actual === null
        ? `${what} at ${seq} lacks event ${index} (${expected.type}) that follows from the state before it`
        : other !== null
          ? `event ${index} of ${what} at ${seq} ingested ${other}: MUSTER_IN no longer holds what the leader read there (the stream lost or wrote over a stored message), so this and later ingests are not re-derived from the leader's inputs`
          : `event ${index} of ${what} at ${seq} differs from its re-derivation${path === '' ? '' : ` at ${path}`}`;
    const check: CheckName = tx.kind === 'session' ? 'session' : tx.kind === 'fact' ? 'fact' : 'ingest';
    this.fail(seq, check, message);
    if (this.divergence !== null) return;
    this.divergence = {
      seq,
      index,
      kind: tx.kind,
      ...(tx.kind === 'session' ? { session: tx.session, part: tx.part } : {}),
      expected,
      actual,
      path,
      message,
    };
  }
}

/**
 * When a logged submission and its re-derivation are of different jobs, what each says (`job X as
 * input N, where MUSTER_IN now holds job Y`): the input itself differs, not what the core made of it.
 */
function otherSubmission(expected: SchedulerEvent | null, actual: SchedulerEvent | null): string | null {
  if (expected?.type !== 'JobSubmitted' || actual?.type !== 'JobSubmitted' || expected.job.id === actual.job.id) return null;
  return `job ${actual.job.id} as input ${actual.inputSeq}, where MUSTER_IN now holds job ${expected.job.id}`;
}

/** The first 12 hex digits of a hash, as messages show it. */
function short(hash: string): string {
  return hash.slice(0, 12);
}

/** The highest input sequence the events name (0 when none). */
function lastInputSeqOf(events: readonly SchedulerEvent[]): number {
  let last = 0;
  for (const event of events) {
    const inputSeq = inputSeqOf(event);
    if (inputSeq !== null && inputSeq > last) last = inputSeq;
  }
  return last;
}

function inputSeqOf(event: SchedulerEvent): number | null {
  return 'inputSeq' in event && typeof event.inputSeq === 'number' ? event.inputSeq : null;
}
