import type { SchedulerEvent } from '../events.ts';
import { shardEntriesSorted, shardGet } from '../shard.ts';
import type { State } from '../state.ts';
import { initialState } from '../state.ts';
import { stateHash } from '../stateHash.ts';
import { turn } from '../turn/turn.ts';
import type { TurnCommand, TurnTransaction } from '../turn/turn.ts';
import type { DoneStep } from './scenario.ts';
import { TurnContext } from '../turn/turnContext.ts';
import { subjects } from '../wire/subjects.ts';

/** The leader name simulated transactions carry. */
const SIMULATOR = 'simulator';

/**
 * Events `muster simulate` prints, one JSON object a line, in log order (DESIGN.md §11, "What
 * muster simulate prints"; contract v1.2 adds `GangRestarting`, and a `JobFinished` that a
 * member's failure caused).
 */
const PRINTED: ReadonlySet<string> = new Set<string>(['JobRejected', 'InputRejected', 'GangCommitted', 'GangAborted', 'GangReserved', 'ReservationCleared', 'GangResized', 'GangRestarting']);

function printed(event: SchedulerEvent): boolean {
  return PRINTED.has(event.type) || (event.type === 'JobFinished' && event.member !== undefined);
}

/** The hashes a simulation takes (a caller may pass its platform's native ones: the same values). */
export interface SimulationHashes {
  /** Hex SHA-256 of bytes (a view, valid only during the call): the log's hashes and job fingerprints. */
  digest?: (bytes: Uint8Array) => string;
  /** The Summary's state hash (default: the core's `stateHash`). */
  stateHash?: (state: State) => string;
}

/** What a simulation counts for its Summary line. */
interface Counts {
  sessions: number;
  committed: number;
  aborted: number;
  rejected: number;
  reserved: number;
  transactions: number;
  events: number;
}

/**
 * A log kept in memory, written by the core's turn as the leader writes it (one input a turn),
 * with the time the scenario gives; it keeps the lines `muster simulate` prints.
 */
export class Simulation {
  state: State = initialState();
  /** The printed lines so far (decisions and rejections), unless `onLine` takes them. */
  readonly lines: string[] = [];
  /** Takes every printed line as it is made instead of `lines` (a long what-if need not hold its output). */
  onLine: ((line: string) => void) | null = null;
  readonly transactions: TurnTransaction[] = [];
  /** Whether `transactions` keeps what was written, serialised and chained (set before the first turn: a long what-if that only prints need not hold, serialise or hash its whole log). */
  keepTransactions = true;
  /** The simulated time: the stamp of the next turn. */
  now = 0;
  /** Called with every event written, in log order. */
  onEvent: ((event: SchedulerEvent) => void) | null = null;
  private readonly context: TurnContext;
  private prev: string | null = null;
  private inputSeq = 0;
  private readonly counts: Counts = { sessions: 0, committed: 0, aborted: 0, rejected: 0, reserved: 0, transactions: 0, events: 0 };

  private readonly stateHash: (state: State) => string;

  /** `hashes`: the SHA-256 digests to use (default: the core's own; the same values). */
  constructor(hashes: SimulationHashes = {}) {
    this.context = new TurnContext(hashes.digest === undefined ? {} : { digest: hashes.digest });
    this.stateHash = hashes.stateHash ?? stateHash;
  }

  /** What a new log's first leader writes: the v1.1 defaults and contract v1.2. */
  start(): void {
    this.turn([{ start: true }]);
  }

  /** One input on `subject`, as it would arrive on MUSTER_IN, in a turn of its own. */
  input(subject: string, body: unknown): void {
    this.inputs([{ subject, body }]);
  }

  /**
   * Inputs that arrive at one instant, each in a transaction of its own as `input` writes it, in
   * one turn (one copy-on-write run: the same transactions and state, less copying).
   */
  inputs(list: readonly { subject: string; body: unknown }[]): void {
    if (list.length === 0) return;
    this.turn(list.map(({ subject, body }) => ({ inputs: [{ seq: ++this.inputSeq, subject, data: JSON.stringify(body) }] })));
  }

  /** A node registers (its subject names its id, or `_` when it has none). */
  register(node: unknown): void {
    const id = typeof node === 'object' && node !== null ? (node as { id?: unknown }).id : undefined;
    this.input(subjects.nodeInput(typeof id === 'string' && id !== '' ? id : '_', 'register'), node);
  }

  /**
   * An operator sets a queue (DESIGN.md §12) on `muster.in.queue.<name>.set`, the name taken from
   * the spec (`_` when it has none that can be a subject token: the ingest then names the field).
   */
  setQueue(spec: unknown): void {
    const name = typeof spec === 'object' && spec !== null ? (spec as { name?: unknown }).name : undefined;
    this.input(subjects.queueSet(typeof name === 'string' && /^[^.*>\s]+$/.test(name) ? name : '_'), spec);
  }

  /** Finishes every running member of a job, each as its node's agent would report it. */
  complete(jobId: string): void {
    const job = shardGet(this.state.jobs, jobId);
    const members = job?.members ?? [];
    if (job === undefined || job.status !== 'running') {
      this.input(subjects.nodeInput('_', 'done'), { jobId, member: 0, ok: true });
      return;
    }
    const reports: { subject: string; body: unknown }[] = [];
    for (const [index, member] of members.entries()) {
      if (member === null || member.done) continue;
      reports.push({ subject: subjects.nodeInput(member.node, 'done'), body: { jobId, member: index, ok: true } });
    }
    this.inputs(reports);
  }

  /**
   * One member of a job finished, reported by the agent of the node it is bound to (any node when
   * it is bound to none), with its exit code, signal and attempt when the step gives them.
   */
  done(step: DoneStep): void {
    const { jobId, member, ok, exitCode, signal, attempt } = step;
    const bound = shardGet(this.state.jobs, jobId)?.members[member];
    const how = { ...(exitCode === undefined ? {} : { exitCode }), ...(signal === undefined ? {} : { signal }), ...(attempt === undefined ? {} : { attempt }) };
    this.input(subjects.nodeInput(bound === null || bound === undefined ? '_' : bound.node, 'done'), { jobId, member, ok: ok ?? true, ...how });
  }

  /** The earliest time a session must run by itself (a timeout, a runtime limit, a guard, a backoff), or null (`Deadlines.next`). */
  nextDeadline(): number | null {
    return this.context.deadlines.next(this.state);
  }

  /** One scheduling session at the current time (nothing when nothing changed and nothing is due). */
  schedule(): void {
    if (this.turn([{ session: true }]) > 0) this.counts.sessions++;
  }

  /** Runs one turn at the current time; prints and counts what it wrote; returns how many transactions. */
  private turn(commands: TurnCommand[]): number {
    // a run that keeps no log needs no transaction's bytes or hash (the events are the same)
    const result = turn(this.context, this.state, this.prev, commands, { term: 1, leader: SIMULATOR, at: this.now }, { encode: this.keepTransactions });
    this.state = result.state;
    this.prev = result.lastHash;
    this.counts.transactions += result.transactions.length;
    if (this.keepTransactions) this.transactions.push(...result.transactions);
    for (const { tx } of result.transactions) {
      this.counts.events += tx.events.length;
      for (const event of tx.events) {
        this.onEvent?.(event);
        if (!printed(event)) continue;
        if (event.type === 'GangCommitted') this.counts.committed++;
        else if (event.type === 'GangAborted') this.counts.aborted++;
        else if (event.type === 'GangReserved') this.counts.reserved++;
        else if (event.type === 'JobRejected' || event.type === 'InputRejected') this.counts.rejected++;
        this.print(JSON.stringify(event));
      }
    }
    return result.transactions.length;
  }

  /** Prints one line: to `onLine` when set, else into `lines`. */
  print(line: string): void {
    if (this.onLine === null) this.lines.push(line);
    else this.onLine(line);
  }

  /** The Summary line's object, with `extra` fields (a workload's figures) before the state hash. */
  summary(extra: Record<string, unknown> = {}): Record<string, unknown> {
    const byStatus: Record<string, number> = {};
    for (const [, job] of shardEntriesSorted(this.state.jobs)) byStatus[job.status] = (byStatus[job.status] ?? 0) + 1;
    return {
      type: 'Summary',
      at: this.now,
      ...this.counts,
      jobs: byStatus,
      nodes: shardEntriesSorted(this.state.nodes).length,
      ...extra,
      stateHash: this.stateHash(this.state),
    };
  }
}
