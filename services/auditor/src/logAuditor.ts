import { decisionMessages, foldTransactions, initialState, shardGet } from '@muster/core';
import type { Input, State, Transaction } from '@muster/core';
import { AuditFindings } from './auditFindings.ts';
import type { CheckName } from './auditReport.ts';
import type { ChainBreak } from './chainVerifier.ts';
import { ChainVerifier } from './chainVerifier.ts';
import { CheckpointCheck } from './checkpointCheck.ts';
import type { DeferredCheckpoint } from './checkpointCheck.ts';
import type { DecisionsCheck } from './decisionsCheck.ts';
import type { DivergenceReport } from './divergenceReport.ts';
import { checkFact } from './factCheck.ts';
import { checkElection, checkStamp } from './fencingCheck.ts';
import { checkIngest } from './ingestCheck.ts';
import { IngestGroups } from './ingestGroups.ts';
import { InvariantChecker } from './invariantChecker.ts';
import { Rederiver } from './rederiver.ts';
import { SessionCheck } from './sessionCheck.ts';
import type { SnapshotCheck } from './snapshotCheck.ts';
import { checkSnapshots } from './snapshotCheck.ts';
import { StateHasher } from './stateHasher.ts';
import type { RangeResult } from './workerProtocol.ts';

/** Where an auditor of a later range starts: the state after transaction `seq` (a stored snapshot's), and that transaction as stored, which the next one links to. */
export interface RangeStart {
  state: State;
  seq: number;
  tx: Transaction;
  payload?: Uint8Array;
}

/** What a `LogAuditor` reads besides the log. */
export interface LogAuditorDeps {
  /** Where it starts, when not at the log's beginning (the later range of a parallel audit). */
  start?: RangeStart;
  /** First sequence to check; earlier transactions are folded (and chained) only. */
  fromSeq: number;
  /** Opens the inputs from a MUSTER_IN sequence on (in batches), or null when no inputs are available. */
  openInputs: ((fromSeq: number) => AsyncIterator<readonly Input[]>) | null;
  /** The log sequences of the stored snapshots (the replayed state is hashed there, to be compared by `checkSnapshots`). */
  snapshots: ReadonlySet<number>;
  /** The decisions stream comparison, or null (offline). */
  decisions: DecisionsCheck | null;
}

/**
 * Replays a log transaction by transaction with the core's own folds (each result frozen and
 * shared structurally, so a turn may start from any of them), and hands each one to the checks of
 * its kind: the hash chain, stamps and fencing, its re-derivation by the core's turn on the state
 * before it (sessions, ingest from the inputs, heartbeat losses; retirements by the retirement
 * rules), checkpoints and snapshots against the replayed state, the invariants, and the decision
 * messages it leads to.
 */
export class LogAuditor {
  /** The state after the last folded transaction. */
  state: State = initialState();
  private readonly findings = new AuditFindings();
  /** The failures found. */
  readonly failures = this.findings.failures;
  /** What the report counts. */
  readonly counts = this.findings.counts;
  /** Milliseconds spent re-deriving sessions (`decide`), inputs (`ingest`) and hashing states. */
  readonly timings = this.findings.timings;
  /** The invariants of DESIGN.md §7, checked after every audited transaction. */
  readonly invariants = new InvariantChecker((v) => this.fail(v.seq, 'invariant', `${v.rule}: ${v.message}`));
  /** Where the hash chain first broke, if it did. */
  chainBreak: ChainBreak | null = null;
  /** The last sequence folded. */
  lastSeq = 0;
  private readonly hasher = new StateHasher(this.timings);
  private readonly rederiver = new Rederiver(this.findings);
  /** Where the log differs from its re-derivation (the first divergence, for the report). */
  readonly divergences: DivergenceReport = this.rederiver.divergences;
  private readonly chain = new ChainVerifier();
  private readonly sessions: SessionCheck;
  private readonly checkpoints: CheckpointCheck;
  private readonly inputs: IngestGroups;
  // the replayed state's hash at each stored snapshot's sequence
  private readonly snapshotHashes = new Map<number, string>();

  constructor(private readonly deps: LogAuditorDeps) {
    this.sessions = new SessionCheck(this.findings, this.rederiver);
    this.inputs = new IngestGroups(deps.openInputs, this.findings);
    const start = deps.start;
    this.checkpoints = new CheckpointCheck(this.findings, this.hasher, start !== undefined);
    if (start !== undefined) {
      this.state = start.state;
      this.lastSeq = start.seq;
      this.chain.startAfter(start.seq, start.tx, start.payload);
      this.invariants.seed(start.state);
    }
  }

  /** Folds and checks the next transaction of the log (`payload`: its stored bytes, when read from NATS). */
  async transaction(seq: number, tx: Transaction, payload?: Uint8Array): Promise<void> {
    const broken = this.chain.check(seq, tx, payload);
    if (broken !== null) this.breakChain(broken);
    const audited = seq >= this.deps.fromSeq;
    this.invariants.beforeTransaction(seq, audited, this.state, tx.events);
    this.lastSeq = seq;
    if (!audited) {
      this.foldWhole(seq, tx);
      this.checkpoints.noteMark(tx, this.state);
      this.snapshotAt(seq);
      return;
    }
    this.counts.transactions++;
    this.counts.events += tx.events.length;
    checkStamp(seq, tx, this.state, this.findings);
    this.sessions.settle(seq, tx);
    if (tx.kind === 'ingest') await this.ingest(seq, tx);
    else if (tx.kind === 'session') this.session(seq, tx);
    else this.checkOther(seq, tx);
    this.invariants.afterTransaction(this.state);
    this.compareDecisions(seq, tx);
    this.snapshotAt(seq);
  }

  /**
   * Whether the audit of what follows may start from the state now (a stored snapshot's, once it
   * hashes the same): no session is open, and the GPUs and rendezvous ports the invariants hold as
   * taken are those the state records.
   */
  splitsHere(): boolean {
    if (this.sessions.isOpen()) return false;
    const fromState = new InvariantChecker();
    fromState.seed(this.state);
    return fromState.holdings() === this.invariants.holdings();
  }

  /** The Checkpoints this auditor of a later range left to the range before it. */
  deferredCheckpoints(): DeferredCheckpoint[] {
    return this.checkpoints.deferred;
  }

  /** The replayed state's hash at stored snapshot sequence `seq`, once reached. */
  snapshotHash(seq: number): string | undefined {
    return this.snapshotHashes.get(seq);
  }

  /** The replayed state's hash at each stored snapshot reached, by sequence. */
  snapshotHashList(): [number, string][] {
    return [...this.snapshotHashes];
  }

  /** Adds what the audit of the range after this one found (its worker's result). */
  merge(later: RangeResult): void {
    const counts: Record<string, number> = this.counts;
    for (const [key, value] of Object.entries(later.counts)) counts[key] = (counts[key] ?? 0) + value;
    this.failures.merge(later.failures, later.failureCount);
    this.divergences.offer(later.divergence);
    this.invariants.merge(later.invariants);
    this.checkpoints.checkDeferred(later.deferredCheckpoints);
    this.chainBreak ??= later.chainBreak;
    this.lastSeq = later.lastSeq;
    for (const [seq, hash] of later.snapshotHashes) this.snapshotHashes.set(seq, hash);
    this.timings.decideMs += later.timings.decideMs;
    this.timings.ingestMs += later.timings.ingestMs;
    this.timings.hashMs += later.timings.hashMs;
  }

  /** Ends the replay: a session still open was cut short by the end of the log; stops reading inputs. */
  async finish(): Promise<void> {
    this.sessions.finish();
    await this.inputs.close();
  }

  /** Compares the stored snapshots (their own bytes checked meanwhile) with the replay: each at a sequence it reached. */
  checkSnapshots(records: readonly SnapshotCheck[]): void {
    for (const r of records) {
      const hash = this.snapshotHashes.get(r.seq);
      if (hash !== undefined) checkSnapshots(r.seq, [r], hash, this.findings);
    }
  }

  /** The canonical hash of a state (default: the current one), with Node's native SHA-256 (timed: on a large state it is the costliest check). */
  hash(state: State = this.state): string {
    return this.hasher.hash(state);
  }

  /** Records that the log cannot be read past `seq` (a message that is not a transaction). */
  breakChain(broken: ChainBreak): void {
    this.chainBreak ??= broken;
    this.fail(broken.seq, 'chain', broken.message);
  }

  /** Records a failure found outside the replay (reading the log, the decisions stream). */
  fail(seq: number, check: CheckName, message: string): void {
    this.findings.fail(seq, check, message);
  }

  private checkOther(seq: number, tx: Transaction): void {
    switch (tx.kind) {
      case 'fact':
        this.state = checkFact(seq, tx, this.state, this.findings, this.rederiver);
        break;
      case 'election':
        checkElection(seq, tx, this.state, this.findings);
        this.foldWhole(seq, tx);
        break;
      case 'checkpoint':
        // a Checkpoint hashes the state before it (or at the last mark): checked before folding
        this.checkpoints.check(seq, tx, this.state);
        this.foldWhole(seq, tx);
        this.checkpoints.noteMark(tx, this.state);
        break;
      default:
        this.fail(seq, 'structure', `transaction ${seq} has unknown kind ${JSON.stringify(tx.kind)}`);
        this.foldWhole(seq, tx);
    }
  }

  private session(seq: number, tx: Transaction): void {
    const after = this.sessions.part(seq, tx, this.state);
    if (after === null) this.foldWhole(seq, tx);
    else this.state = after;
  }

  // reads and groups the inputs, checks that each is ingested once, in order, and re-derives them
  private async ingest(seq: number, tx: Transaction): Promise<void> {
    const groups = await this.inputs.of(seq, tx, this.state.lastInputSeq);
    this.state = checkIngest(seq, tx, groups, this.state, this.rederiver, this.timings);
  }

  // the decision messages transaction `seq` leads to, each job and node looked up in the state after it
  private compareDecisions(seq: number, tx: Transaction): void {
    this.deps.decisions?.fromLog(decisionMessages(seq, tx, (id) => shardGet(this.state.jobs, id), (id) => shardGet(this.state.nodes, id)));
  }

  private foldWhole(seq: number, tx: Transaction): void {
    this.state = foldTransactions(this.state, [{ seq, tx }]);
  }

  private snapshotAt(seq: number): void {
    if (this.deps.snapshots.has(seq)) this.snapshotHashes.set(seq, this.hash());
  }
}
