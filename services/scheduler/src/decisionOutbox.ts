import type { Logger } from 'pino';
import { publishDecisions, readLog } from '@muster/bus';
import type { Bus, PublishedDecision } from '@muster/bus';
import { decisionMessages, shardGet, transactionHash } from '@muster/core';
import type { LoggedTransaction, OutboundMessage, State, Transaction } from '@muster/core';
import { firstOwed, judgedRange } from './firstOwed.ts';
import type { Ledger } from './ledger.ts';
import { PUBLISHED_TAIL, publishedTail } from './publishedEvidence.ts';

/** Transactions the log took, with the state after them (their decisions' jobs are looked up there). */
export interface Adopted {
  logged: readonly LoggedTransaction[];
  state: State;
}

/** What the outbox publishes with. */
export interface DecisionOutboxDeps {
  bus: Bus;
  log: Logger;
  /** MUSTER_DECISIONS' last messages as the replica judged them before leading (read again when absent, or once used). */
  published?: readonly PublishedDecision[];
  /** The log's transaction at a sequence, when the replica has it at hand (others are read). */
  recentTx?: (seq: number) => Transaction | undefined;
}

/**
 * The most messages one publish call sends: half the tail a successor reads (`firstOwed`), so the
 * successes of a leader's last call, where a hole it left lies, are inside that tail.
 */
export const PUBLISH_CALL_MAX = PUBLISHED_TAIL / 2;

/** The decision messages of transactions the log took, each job looked up in the state after them (a later transaction may have retired it). */
function messagesOf(adopted: readonly Adopted[]): OutboundMessage[] {
  return adopted.flatMap(({ logged, state }) => logged.flatMap(({ seq, tx }) => decisionMessages(seq, tx, (id) => shardGet(state.jobs, id), (id) => shardGet(state.nodes, id))));
}

/** `msgs` in publish calls of at most PUBLISH_CALL_MAX, in order. */
function callsOf(msgs: readonly OutboundMessage[]): OutboundMessage[][] {
  const calls: OutboundMessage[][] = [];
  for (let i = 0; i < msgs.length; i += PUBLISH_CALL_MAX) calls.push(msgs.slice(i, i + PUBLISH_CALL_MAX));
  return calls;
}

/**
 * The leader's decisions on their way to MUSTER_DECISIONS, in log order, while the next turns are
 * planned: adopted transactions wait here, and each round publishes all of them once the round
 * before it is acked, in calls of at most PUBLISH_CALL_MAX. What a predecessor (or a failed round)
 * left unpublished is re-published from the log first: a successor resumes at the first hole in
 * the published tail (`firstOwed`), else after the last decision published.
 */
export class DecisionOutbox {
  private readonly waiting: Adopted[] = [];
  // rounds adopted while something was owed: published after the catch-up, from memory, in order
  private readonly held: Adopted[] = [];
  private publishing: Promise<void> = Promise.resolve();
  private active = false;
  // the first log sequence whose decisions may be unpublished (null: none owed)
  private unpublishedFrom: number | null = null;
  private cursorKnown = false;
  // the catch-up running in the background (prepare), if any
  private catchingUp: Promise<boolean> | null = null;
  private catching: Promise<void> = Promise.resolve();
  // the tail judged before leading, used once for where publishing resumes
  private published: readonly PublishedDecision[] | undefined;
  // a tail whose first owed sequence the catch-up is still to find exactly (null: none)
  private owedTail: readonly PublishedDecision[] | null = null;

  constructor(
    private readonly deps: DecisionOutboxDeps,
    private readonly ledger: Ledger,
  ) {
    this.published = deps.published;
  }

  /** Queues the decisions of transactions the log took; published behind the rounds before them, without holding up the next turn. */
  push(adopted: Adopted): void {
    this.waiting.push(adopted);
    if (!this.active) {
      this.active = true;
      this.publishing = this.drain();
    }
  }

  /** Resolves when the rounds under way (and a catch-up in the background) are done. */
  async idle(): Promise<void> {
    await Promise.all([this.publishing, this.catching]);
  }

  /**
   * Gets what is owed published without holding up the turns: learns where the predecessor's
   * publishing stopped (false until it could: nothing new may be decided before, or its decisions
   * could go out ahead of what is owed), then runs the catch-up in the background, one at a time.
   * Turns meanwhile append as usual; their decisions wait for the catch-up, which publishes in log
   * order (a successor resumes at the first hole its predecessor left, `firstOwed`).
   */
  async prepare(appended: () => Promise<boolean>): Promise<boolean> {
    if (!this.cursorKnown) {
      try {
        await this.learnCursor();
      } catch (err) {
        this.deps.log.warn({ err }, 'decisions owed could not be found yet: retrying');
        return false;
      }
    }
    if (this.unpublishedFrom !== null && this.catchingUp === null) {
      this.catchingUp = this.catchUp(appended).finally(() => {
        this.catchingUp = null;
      });
      this.catching = this.catchingUp.then(() => undefined);
    }
    return true;
  }

  /**
   * Where a predecessor's publishing stopped, from MUSTER_DECISIONS' last messages (those judged
   * before leading, else read): exactly (`firstOwed`) when the replica has the log's transactions
   * they came from at hand, else the tail's first judged sequence for now, found exactly by the
   * catch-up (a read of the log a takeover's first turn need not wait for).
   */
  private async learnCursor(): Promise<void> {
    const tail = this.published ?? (await publishedTail(this.deps.bus));
    this.published = undefined;
    const range = judgedRange(tail);
    const txs = range === null ? new Map<number, Transaction>() : this.atHand(range);
    if (txs === null) this.owedTail = tail;
    this.unpublishedFrom = txs === null ? range!.from : firstOwed(tail, txs);
    this.cursorKnown = true;
  }

  /** The log's transactions over `range` as the replica has them at hand, or null when one is not. */
  private atHand(range: { from: number; to: number }): Map<number, Transaction> | null {
    const txs = new Map<number, Transaction>();
    for (let seq = range.from; seq <= range.to; seq++) {
      const tx = this.deps.recentTx?.(seq);
      if (tx === undefined) return null;
      txs.set(seq, tx);
    }
    return txs;
  }

  /** `firstOwed` of `tail`, its transactions read from the log. */
  private async firstOwedRead(tail: readonly PublishedDecision[]): Promise<number> {
    const range = judgedRange(tail)!;
    const txs = new Map<number, Transaction>();
    for await (const { seq, tx } of readLog(this.deps.bus, { fromSeq: range.from })) {
      if (seq > range.to) break;
      txs.set(seq, tx);
    }
    return firstOwed(tail, txs);
  }

  /**
   * Publishes what earlier leaders (or failed rounds of this one) left owed, once `appended` (every
   * append sent) has settled; false when it could not yet (nothing new may be decided until then).
   */
  async catchUp(appended: () => Promise<boolean>): Promise<boolean> {
    try {
      // the log up to the ledger is re-published: every append sent must be adopted first
      if (this.unpublishedFrom !== null && !(await appended())) return false;
      if (this.unpublishedFrom !== null) await this.publishing;
      if (this.owedTail !== null) {
        // found exactly, at or after the provisional cursor: what drain held back meanwhile came later
        this.unpublishedFrom = await this.firstOwedRead(this.owedTail);
        this.owedTail = null;
      }
      if (this.unpublishedFrom !== null) await this.republish(this.unpublishedFrom);
      return true;
    } catch (err) {
      this.deps.log.warn({ err }, 'decisions owed could not be published yet: retrying');
      return false;
    }
  }

  /**
   * Publishes the queue in rounds until it is empty: each round takes everything adopted so far,
   * so a leader taking many small turns still needs only one ack round trip per round. A round
   * that follows decisions owed is held for the catch-up, which publishes in log order; the rest of
   * one that fails is re-read from the log by it.
   */
  private async drain(): Promise<void> {
    try {
      while (this.waiting.length > 0) {
        const round = this.waiting.splice(0);
        if (this.unpublishedFrom !== null) {
          this.held.push(...round);
          continue;
        }
        const owed = await this.publishRound(round);
        if (owed !== null) this.unpublishedFrom = Math.min(this.unpublishedFrom ?? Infinity, owed);
      }
    } finally {
      this.active = false;
    }
  }

  /**
   * Publishes the decision messages of one round, call after call; null when every one was acked,
   * else (and a warning) the log sequence of the first message of the call that failed (later
   * calls are not sent).
   */
  private async publishRound(round: readonly Adopted[]): Promise<number | null> {
    for (const call of callsOf(messagesOf(round))) {
      try {
        const r = await publishDecisions(this.deps.bus, call);
        if (r.ok) continue;
        this.deps.log.warn({ code: r.code, err: r.cause }, 'decisions not all published: will re-publish');
      } catch (err) {
        this.deps.log.warn({ err }, 'publishing decisions failed: will re-publish');
      }
      return call[0]!.logSeq;
    }
    return null;
  }

  /**
   * Re-publishes the decisions of the log from `fromSeq` (the msg ids make repeats harmless), only
   * when what was read is the history this replica folded: the chain read links up and ends in the
   * ledger's last hash. nats-server 2.9.10 can serve a read from a stream replica whose copy
   * diverged (a node that led in a minority stored appends that never committed, and kept them
   * after the partition healed; docs/drills.md): decisions of a transaction that is not in the log
   * must never reach the agents.
   */
  private async republish(fromSeq: number): Promise<void> {
    // the ledger moves on while this runs (turns go on): re-publish up to where it is now
    const to = this.ledger.seq;
    const folded = this.ledger.lastHash;
    if (fromSeq <= to) {
      const txs: LoggedTransaction[] = [];
      let last: { seq: number; hash: string; tx: LoggedTransaction['tx'] } | null = null;
      for await (const logged of readLog(this.deps.bus, { fromSeq })) {
        if (logged.seq > to) break;
        txs.push(logged);
        last = logged;
      }
      if (last === null || last.seq !== to || (last.hash !== folded && transactionHash(last.tx) !== folded)) {
        throw new Error(`the log read from ${fromSeq} (to ${last?.seq ?? 'nothing'}) is not the history this replica folded to ${to}: not re-publishing`);
      }
      const msgs = messagesOf([{ logged: txs, state: this.ledger.state }]);
      for (const call of callsOf(msgs)) {
        const r = await publishDecisions(this.deps.bus, call);
        if (!r.ok) throw new Error(`re-publishing decisions failed: ${r.code}`);
      }
      if (msgs.length > 0) this.deps.log.info({ fromSeq, messages: msgs.length }, 're-published decisions');
    }
    // what the log took meanwhile was held back (drain publishes nothing while something is owed):
    // what of it came after `to` goes out now, from memory, still in log order. Re-reading it from
    // the log at the next catch-up instead never caught up at 200 gangs/s: a new catch-up for every
    // round, each a read of the log
    this.unpublishedFrom = await this.publishHeld(to);
  }

  /**
   * Publishes the held rounds' transactions after `after`, until none is held; null when all went
   * out, else the log sequence owed from (what is still held is dropped: a catch-up re-reads it).
   */
  private async publishHeld(after: number): Promise<number | null> {
    let covered = after;
    while (this.held.length > 0) {
      const rounds = this.held
        .splice(0)
        .map(({ logged, state }) => ({ logged: logged.filter((l) => l.seq > covered), state }))
        .filter((r) => r.logged.length > 0);
      if (rounds.length === 0) continue;
      const owed = await this.publishRound(rounds);
      if (owed !== null) {
        this.held.length = 0;
        return owed;
      }
      const lastRound = rounds[rounds.length - 1]!.logged;
      covered = lastRound[lastRound.length - 1]!.seq;
    }
    return null;
  }
}
