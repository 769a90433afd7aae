import { idOf, subjects } from '@muster/bus';
import type { Bus, BusSubscription } from '@muster/bus';
import { shardEntriesSorted } from '@muster/core';
import type { State } from '@muster/core';
import { monotonicMs } from './config.ts';

/**
 * Last-seen times of nodes from their heartbeats on core NATS `muster.hb.<nodeId>`, kept in memory
 * only (heartbeats are not stored); the leader asks which nodes are overdue.
 */
export class HeartbeatMonitor {
  private readonly seen = new Map<string, number>();
  private sub: BusSubscription | null = null;

  constructor(private readonly timeoutMs: number) {}

  /** Starts listening. */
  start(bus: Bus): void {
    this.sub = bus.subscribe(subjects.allHeartbeats, (msg) => this.seen.set(idOf(msg.subject), monotonicMs()));
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
    if (this.timeoutMs <= 0) return [];
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
