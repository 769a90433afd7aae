import type { DrillCluster } from './drillCluster.ts';
import type { DrillOptions } from './drillOptions.ts';
import type { FaultKind } from './faults/index.ts';
import type { DrillRandom } from './drillRandom.ts';

/** One fault as injected: what, on whom, when, and what the drill saw live. */
export interface FaultRecord {
  /** 1, 2, … in the order they were injected. */
  n: number;
  kind: FaultKind;
  /** The replica id or NATS node name it hit (null when skipped before choosing). */
  target: string | null;
  /** When it hit (ms since the epoch): the kill, the SIGSTOP. */
  at: number;
  /** When the drill was done with it (the process restarted, resumed, the node back). */
  endedAt: number;
  /** Why it was not injected (nothing to hit without breaking the drill's own rules), else null. */
  skipped: string | null;
  /** What went wrong while injecting or restarting, else null. */
  error: string | null;
  /** For a leader fault: the replica that answered as leader next, as seen by polling statuses. */
  nextLeader: string | null;
  /** slow-network: the delay and loss put on what the replicas send to NATS, how many connections went through the drill's proxies when it began, and one status request's round trip before and in the middle of it (ms; -1: no answer). */
  slow?: { delayMs: number; loss: number; connections: number; statusMs: { before: number; during: number } };
  /** A NATS fault: how long after the node was back every stream's copy on it was current again (it was not free for the next NATS fault until then). */
  caughtUpMs?: number;
  /** full-disk: the tmpfs's size, the bytes left free once filled, how long it stayed full, and whether the node's monitor answered at the end of that and within 3 s of the filler's removal (before its recovery on an empty store). */
  disk?: { mb: number; freeBytesWhenFull: number; fullMs: number; answeredWhenFull: boolean; answeredAfterFree: boolean; recovery: 'empty-store' | 'same-store' };
  /** restart-nats, full-disk: how many more times the node was restarted because its store stopped catching up. */
  stalledRestarts?: number;
  /** fast-clock: when the replica ran with its clock ahead (ms since the epoch, the drill's true clock) and whether it led meanwhile. */
  fastClock?: { replica: string; aheadMs: number; from: number; to: number; led: boolean; toSeq: number; killed: string; killedAt: number };
}

/** What fault injection works with; `busy` holds the targets a fault is acting on right now. */
export interface FaultContext {
  cluster: DrillCluster;
  opts: DrillOptions;
  random: DrillRandom;
  busy: Set<string>;
  progress: (line: string) => void;
  /** Aborted when the schedule's bound on its faults has passed: the waits for a NATS node's copies give up (an error of that fault) so the drill can check what it has. */
  cutShort: AbortSignal;
}
