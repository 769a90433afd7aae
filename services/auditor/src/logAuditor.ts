import { decisionMessages, foldTransactions, initialState, shardGet } from '@muster/core';
import type { Input, State, Transaction } from '@muster/core';
import { AuditFindings } from './auditFindings.ts';
import type { CheckName } from './auditReport.ts';
import type { ChainBreak } from './chainVerifier.ts';
import { ChainVerifier } from './chainVerifier.ts';
import { CheckpointCheck } from './checkpointCheck.ts';
import type { DecisionsCheck } from './decisionsCheck.ts';
import type { DivergenceReport } from './divergenceReport.ts';
import { checkFact } from './factCheck.ts';
import { checkElection, checkStamp } from './fencingCheck.ts';
import type { HandedWork, Helper } from './helper.ts';
import { checkIngest } from './ingestCheck.ts';
import { IngestGroups } from './ingestGroups.ts';
import { InvariantChecker } from './invariantChecker.ts';
import { Rederiver } from './rederiver.ts';
import { SessionCheck } from './sessionCheck.ts';
import type { SnapshotCheck } from './snapshotCheck.ts';
import { checkSnapshots } from './snapshotCheck.ts';
import { StateHasher } from './stateHasher.ts';

/** What a `LogAuditor` reads besides the log. */
export interface LogAuditorDeps {
  /** A helper thread to hand re-derivations to when it has room (transactions read from NATS only). */
  helper?: Helper | null;
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
  private readonly checkpoints = new CheckpointCheck(this.findings, this.hasher);
  private readonly inputs: IngestGroups;
  // the replayed state's hash at each stored snapshot's sequence
  private readonly snapshotHashes = new Map<number, string>();

  /** `helped`: this auditor is a helper thread's, which only folds and makes the re-derivations handed to it (`handed`). */
  constructor(
    private readonly deps: LogAuditorDeps,
    helped = false,
  ) {
    // a helper leaves what is wrong with the log's structure to the main thread
    this.sessions = new SessionCheck(this.findings, this.rederiver, !helped);
    this.inputs = new IngestGroups(deps.openInputs, this.findings);
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
      this.checkpoints.noteMark(tx, this.state);
      this.snapshotAt(seq);
      return;
    }
    this.counts.transactions++;
    this.counts.events += tx.events.length;
    checkStamp(seq, tx, this.state, this.findings);
    this.sessions.settle(seq, tx);
    if (tx.kind === 'ingest') {
      await this.ingest(seq, tx, helper, payload);
    } else if (tx.kind === 'session') {
      // a session goes to the helper whole (it compares its later parts with what it derived)
      const handed = helper !== null && this.sessions.handsTo(helper, tx);
      helper?.hand(seq, payload!, handed ? { kind: 'session' } : null);
      this.session(seq, tx, !handed);
    } else {
      helper?.hand(seq, payload!, null);
      this.checkOther(seq, tx);
    }
    this.invariants.afterTransaction(this.state);
    this.compareDecisions(seq, tx);
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
    this.sessions.settle(seq, tx);
    if (tx.kind === 'session') this.session(seq, tx, work?.kind === 'session');
    else if (tx.kind === 'ingest' && work?.kind === 'ingest') this.state = checkIngest(seq, tx, work.groups, this.state, this.rederiver, this.timings);
    else this.foldWhole(seq, tx);
    this.compareDecisions(seq, tx);
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

  // `derive`: whether this thread re-derives the session, if the transaction starts one
  private session(seq: number, tx: Transaction, derive: boolean): void {
    const after = this.sessions.part(seq, tx, this.state, derive);
    if (after === null) this.foldWhole(seq, tx);
    else this.state = after;
  }

  // The main thread reads and groups the inputs, and checks that each is ingested once, in order;
  // the re-derivation is the helper's when it has room.
  private async ingest(seq: number, tx: Transaction, helper: Helper | null, payload: Uint8Array | undefined): Promise<void> {
    const groups = await this.inputs.of(seq, tx, this.state.lastInputSeq);
    const handed = helper !== null && groups.some((g) => g.input !== null) && helper.hasRoom();
    helper?.hand(seq, payload!, handed ? { kind: 'ingest', groups } : null);
    if (handed) this.foldWhole(seq, tx);
    else this.state = checkIngest(seq, tx, groups, this.state, this.rederiver, this.timings);
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
