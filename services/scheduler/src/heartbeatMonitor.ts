import { idOf, subjects } from '@muster/bus';
import type { Bus, BusSubscription, ConnectionChange } from '@muster/bus';
import { shardEntriesSorted } from '@muster/core';
import type { State } from '@muster/core';
import { monotonicMs } from './config.ts';

/** What the leader answers a heartbeat from a node it holds as lost: its agent then registers the node again. */
export const LOST_ANSWER = '{"status":"lost"}';

/**
 * Last-seen times of nodes from their heartbeats on core NATS `muster.hb.<nodeId>`, kept in memory
 * only (heartbeats are not stored); the leader asks which nodes are overdue. While a leader lets it
 * (`answerLost`), a heartbeat that names a reply subject and comes from a node the leader's state
 * holds as lost is answered with `LOST_ANSWER`: the node is alive again after a partition or a
 * pause, and only its agent can bring it back (by registering it). Only what the leader could hear
 * counts: while its own connection is down no node is overdue, and once it is back every node
 * starts a fresh timeout (silence it could not have heard is no evidence), as at a takeover.
 */
export class HeartbeatMonitor {
  private readonly seen = new Map<string, number>();
  private sub: BusSubscription | null = null;
  private isLost: ((nodeId: string) => boolean) | null = null;
  // the connection heartbeats arrive on is away from NATS (disconnected, or its server went stale)
  private deaf = false;

  constructor(private readonly timeoutMs: number) {}

  /** Starts listening. */
  start(bus: Bus): void {
    this.sub = bus.subscribe(subjects.allHeartbeats, (msg) => {
      const nodeId = idOf(msg.subject);
      this.seen.set(nodeId, monotonicMs());
      if (msg.reply !== undefined && this.isLost?.(nodeId) === true) bus.publish(msg.reply, LOST_ANSWER);
    });
  }

  /** Answers heartbeats of nodes `isLost` names (a leader, for its term), or none (null). */
  answerLost(isLost: ((nodeId: string) => boolean) | null): void {
    this.isLost = isLost;
  }

  /** Hears the heartbeats' connection leave NATS (deaf until it is back) and come back (every node graced). */
  connection(change: Pick<ConnectionChange, 'kind'>): void {
    this.deaf = change.kind !== 'reconnect';
    if (!this.deaf) this.graceAll();
  }

  /** Gives every node a fresh grace period (a new leader does this at takeover). */
  graceAll(): void {
    const now = monotonicMs();
    for (const key of this.seen.keys()) this.seen.set(key, now);
    this.graceFrom = now;
  }

  /** Counts a node as seen now (it just registered). */
  touch(nodeId: string): void {
    this.seen.set(nodeId, monotonicMs());
  }

  /** Up or drained nodes silent for longer than the timeout, in id order. */
  overdue(state: State): string[] {
    if (this.timeoutMs <= 0 || this.deaf) return [];
    const now = monotonicMs();
    const out: string[] = [];
    for (const [id, node] of shardEntriesSorted(state.nodes)) {
      if (node.status === 'lost') continue;
      const last = this.seen.get(id) ?? this.graceFrom;
      if (now - last > this.timeoutMs) out.push(id);
    }
    return out;
  }

  /** Stops listening. */
  stop(): void {
    this.sub?.unsubscribe();
    this.sub = null;
  }

  private graceFrom = monotonicMs();
}
