import { canonicalDigest } from '../canonical.ts';
import { copyOnWriteSteps } from '../copyOnWrite.ts';
import type { Writer } from '../copyOnWrite.ts';
import { makeTransaction } from '../chain.ts';
import type { LoggedTransaction, TransactionKind } from '../envelope.ts';
import type { SchedulerEvent } from '../events.ts';
import { apply } from '../evolve.ts';
import { heartbeatLost, ingest } from '../ingest.ts';
import type { Input } from '../ingest.ts';
import { retirement } from '../retire.ts';
import { sessionSteps } from '../session/runSession.ts';
import { runSteps } from '../steps.ts';
import type { Steps } from '../steps.ts';
import type { AttemptInfo } from '../session/sessionOptions.ts';
import type { SessionStats } from '../session/sessionStats.ts';
import type { State } from '../state.ts';
import { DEFAULT_POLICY } from '../contract/defaultPolicy.ts';
import type { TurnContext } from './turnContext.ts';
import { INGEST_LIMITS, SESSION_LIMITS, TransactionCutter, openNext } from './transactionCutter.ts';

// The turn (DESIGN.md §1, "One turn, written once"): what a leader does with a batch of inputs,
// facts and a stamp is this one pure function. The leader, `muster simulate`, the test harness,
// the auditor's re-derivation and the drill's checks call it, so they cannot disagree. Each event
// is derived against the state its predecessors left and applied once, with the recipe replay
// uses (`apply`), in a copy-on-write run per phase; the state returned equals folding the
// transactions returned onto the state given (evolve's property tests and turn.test.ts prove it).
// Transactions are cut, opened and numbered here alone (transactionCutter.ts): a session hands its
// gangs to the turn's cutter one by one.

/** One thing a turn does; a turn does its commands in the order given. */
export type TurnCommand =
  /** A new leader's `LeaderElected`, for the stamp's term and leader (an election transaction). */
  | { elect: true }
  /**
   * A new log's start: when the log holds nothing but elections, the v1.1 defaults as a `PolicySet`
   * and `ContractSet` 1.2 (one fact transaction), so that a new log decides under contract v1.2;
   * otherwise nothing.
   */
  | { start: true }
  /** Inputs read from MUSTER_IN, in sequence order: ingest transactions, split by size. */
  | { inputs: readonly Input[] }
  /** Nodes the leader found silent for too long: one fact transaction of `NodeLost`s and their consequences. */
  | { lostNodes: readonly string[] }
  /** Retires finished jobs kept `retainMs` or longer, at most `limit` of them (a fact transaction). */
  | { retire: { retainMs: number; limit: number } }
  /** A scheduling session, when one is needed: its transactions, the first starting with `SessionStarted`; timeouts and runtime limits fall due up to `dueBy` when it is earlier than the stamp. */
  | { session: true; dueBy?: number }
  /** A Checkpoint naming the state after transaction `seq` (the state before this one, or a mark's). */
  | { checkpoint: { seq: number; stateHash: string } }
  /** A checkpoint mark: an empty checkpoint transaction, whose state a later Checkpoint names. */
  | { mark: true };

/** Who writes a turn and when; `at` is raised to the state's last stamp if earlier (the log's time never goes back). */
export interface TurnStamp {
  term: number;
  leader: string;
  at: number;
}

/** A transaction a turn made: its log sequence, envelope, canonical bytes (what is appended) and their hash. */
export interface TurnTransaction extends LoggedTransaction {
  payload: Uint8Array;
  hash: string;
}

/** What a turn did. */
export interface TurnResult {
  /** The transactions to append, in order, each chained to the one before. */
  transactions: TurnTransaction[];
  /** The state after them (frozen); the state given when there are none. */
  state: State;
  /** The hash of the last transaction (the given one when there are none). */
  lastHash: string | null;
  /** What the turn's session did, or null when it ran none. */
  session: SessionStats | null;
  /** The state after the turn's checkpoint mark, or null when it made none. */
  marked: State | null;
}

/** Options of one turn (nothing here changes what it decides). */
export interface TurnOptions {
  /** Called after every attempt of the session (the benchmark's timings). */
  onAttempt?: (info: AttemptInfo) => void;
  /**
   * Whether the transactions are serialised and hashed (default true). A caller that reads only
   * their events (the auditor's re-derivation, a simulation that keeps no log) passes false: each
   * transaction then has an empty payload and hash, chains to the `lastHash` given, and the
   * result's `lastHash` is that one.
   */
  encode?: boolean;
}

/** A transaction's log sequence (as opened), kind, session numbering and events, before it is chained and encoded. */
interface Planned {
  seq: number;
  kind: TransactionKind;
  session: number;
  part: number;
  parts: number;
  events: SchedulerEvent[];
}

/**
 * One turn: the commands done in order on `state`, stamped with `stamp`; returns the transactions
 * to append after the one whose hash is `lastHash`, and the state after them. Pure and
 * deterministic: the same state, commands and stamp give the same bytes.
 */
export function turn(...args: Parameters<typeof turnSteps>): TurnResult {
  return runSteps(turnSteps(...args));
}

/**
 * `turn` in steps: it yields after every input it ingests, every attempt of its session and every
 * transaction it encodes (Steps), so a leader can give the event loop a turn during a long session; the same
 * result wherever it paused. The context is the turn's until it ends.
 */
export function* turnSteps(
  context: TurnContext,
  state: State,
  lastHash: string | null,
  commands: readonly TurnCommand[],
  stamp: TurnStamp,
  options: TurnOptions = {},
): Steps<TurnResult> {
  const { planned, at, state: after, session, marked } = yield* planSteps(context, state, commands, stamp, options);
  const encoded = options.encode === false ? unencoded(lastHash, planned, stamp, at) : yield* encode(context, lastHash, planned, stamp, at);
  return { ...encoded, state: after, session, marked };
}

/** What a turn planned before encoding: its transactions as opened, its stamp and the state after them. */
interface TurnPlan {
  planned: Planned[];
  at: number;
  state: State;
  session: SessionStats | null;
  marked: State | null;
}

// The turn's commands done in order (everything but encoding), in steps.
function* planSteps(context: TurnContext, state: State, commands: readonly TurnCommand[], stamp: TurnStamp, options: TurnOptions): Steps<TurnPlan> {
  const at = Math.max(stamp.at, state.lastAt);
  const planned: Planned[] = [];
  let current = state;
  let session: SessionStats | null = null;
  let marked: State | null = null;
  let i = 0;
  while (i < commands.length) {
    const command = commands[i]!;
    if ('session' in command) {
      const cutter = new TransactionCutter(SESSION_LIMITS, { at, term: stamp.term });
      const result = yield* sessionSteps(current, at, {
        cutter,
        hosts: context.hosts,
        indices: context.indices,
        pending: context.pending,
        order: context.order,
        running: context.running,
        plans: context.plans,
        deadlines: context.deadlines,
        ...(command.dueBy === undefined ? {} : { dueBy: command.dueBy }),
        ...(options.onAttempt === undefined ? {} : { onAttempt: options.onAttempt }),
      });
      // a session that was not needed wrote nothing and ran nothing
      if (result.parts.length > 0) session = result.stats;
      const number = current.session + 1;
      result.parts.forEach((events, k) => planned.push({ seq: cutter.seqs[k]!, kind: 'session', session: number, part: k + 1, parts: result.parts.length, events }));
      current = result.state;
      i++;
      continue;
    }
    // the commands up to the next session (or up to a mark, whose state is kept) in one
    // copy-on-write run: each event derived against the state its predecessors left, then applied once
    let end = i;
    while (end < commands.length && !('session' in commands[end]!)) {
      end++;
      if ('mark' in commands[end - 1]!) break;
    }
    const batch = commands.slice(i, end);
    const before = planned.length;
    const next = yield* copyOnWriteSteps(current, function* (root, w) {
      for (const c of batch) yield* plan(context, root, w, c, at, stamp, planned);
    }, { shared: context.shared });
    // a batch that planned nothing changed nothing: keep the state as it was
    if (planned.length > before) current = next;
    if ('mark' in batch[batch.length - 1]!) marked = current;
    i = end;
  }
  return { planned, at, state: current, session, marked };
}

/** Plans one non-session command on the run's root: opens each transaction, derives its events and applies them (in steps: one per input). */
function* plan(context: TurnContext, root: State, w: Writer, command: TurnCommand, at: number, stamp: TurnStamp, out: Planned[]): Steps<void> {
  const open = (kind: TransactionKind): Planned => {
    const tx: Planned = { seq: openNext(root, { at, term: stamp.term }), kind, session: root.session, part: 1, parts: 1, events: [] };
    out.push(tx);
    return tx;
  };
  const add = (tx: Planned, events: readonly SchedulerEvent[]): void => {
    for (const event of events) {
      apply(root, event, w);
      tx.events.push(event);
    }
  };
  if ('elect' in command) {
    add(open('election'), [{ type: 'LeaderElected', term: stamp.term, leader: stamp.leader }]);
  } else if ('start' in command) {
    if (isNewLog(root)) add(open('fact'), [{ type: 'PolicySet', policy: { ...DEFAULT_POLICY } }, { type: 'ContractSet', version: '1.2' }]);
  } else if ('inputs' in command) {
    // one input's events are one unit: a transaction closes before the input that would overflow it
    const cutter = new TransactionCutter(INGEST_LIMITS, { at, term: stamp.term });
    for (const input of command.inputs) {
      // the context's buffer and native SHA-256 fingerprint each submitted job (same value, less work)
      const events = ingest(root, input, at, context);
      const opened = cutter.transactions.length;
      const tx = cutter.add(root, events);
      if (cutter.transactions.length > opened) out.push({ seq: cutter.seqs[opened]!, kind: 'ingest', session: root.session, part: 1, parts: 1, events: tx });
      for (const event of events) apply(root, event, w);
      yield;
    }
  } else if ('lostNodes' in command) {
    let tx: Planned | null = null;
    for (const nodeId of command.lostNodes) {
      // each loss is decided against the state the losses before it left
      const events = heartbeatLost(root, nodeId, at);
      if (events.length === 0) continue;
      tx ??= open('fact');
      add(tx, events);
    }
  } else if ('retire' in command) {
    const event = retirement(root, at, command.retire.retainMs, command.retire.limit);
    if (event !== null) add(open('fact'), [event]);
  } else if ('checkpoint' in command) {
    add(open('checkpoint'), [{ type: 'Checkpoint', seq: command.checkpoint.seq, stateHash: command.checkpoint.stateHash }]);
  } else if ('mark' in command) {
    open('checkpoint');
  }
}

/** Whether a log holds nothing but elections (no input ingested, no session, no policy): a new log, whose start writes the v1.1 defaults and contract v1.2. */
function isNewLog(state: State): boolean {
  return state.policy === undefined && state.lastInputSeq === 0 && state.session === 0 && state.lastCheckpoint === null && state.nextSubmitIndex === 0;
}

const NO_BYTES = new Uint8Array(0);

/** The planned transactions at the sequences they were opened at, neither serialised nor hashed (`TurnOptions.encode` false). */
function unencoded(lastHash: string | null, planned: readonly Planned[], stamp: TurnStamp, at: number): { transactions: TurnTransaction[]; lastHash: string | null } {
  const transactions = planned.map((p): TurnTransaction => ({
    seq: p.seq,
    tx: makeTransaction(lastHash, { kind: p.kind, term: stamp.term, leader: stamp.leader, at, session: p.session, part: p.part, parts: p.parts }, p.events),
    payload: NO_BYTES,
    hash: '',
  }));
  return { transactions, lastHash };
}

/** Chains, stamps and encodes the planned transactions (after the one whose hash is `lastHash`), each at the sequence it was opened at. */
function* encode(context: TurnContext, lastHash: string | null, planned: readonly Planned[], stamp: TurnStamp, at: number): Steps<{ transactions: TurnTransaction[]; lastHash: string | null }> {
  const transactions: TurnTransaction[] = [];
  let prev = lastHash;
  for (const p of planned) {
    const tx = makeTransaction(prev, { kind: p.kind, term: stamp.term, leader: stamp.leader, at, session: p.session, part: p.part, parts: p.parts }, p.events);
    const { payload, hash } = canonicalDigest(tx, (bytes) => ({ payload: bytes.slice(), hash: context.digest(bytes) }), context.scratch);
    transactions.push({ seq: p.seq, tx, payload, hash });
    prev = hash;
    yield;
  }
  return { transactions, lastHash: prev };
}
