import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { ByteScratch } from '../byteWriter.ts';
import { HostIndexCache } from '../placement/sessionIndex.ts';
import { Deadlines } from '../session/deadlines.ts';
import { KeptPlans } from '../session/keptPlans.ts';
import type { PendingLeaves } from '../session/pendingLeaves.ts';
import { PendingOrder } from '../session/pendingOrder.ts';
import { RunningTimeline } from '../session/runningTimeline.ts';
import { PartMemo } from '../shardDiff.ts';

/** How a turn context is made. */
export interface TurnContextOptions {
  /**
   * Hex SHA-256 of a transaction's canonical bytes (its hash, the next one's `prev`). Default: the
   * core's own; a service may pass its platform's native SHA-256, which gives the same value.
   */
  digest?: (bytes: Uint8Array) => string;
  /**
   * Whether sessions use the indices that make their cost follow what changed (issue 32: plans a
   * host could not take, roles the free room cannot hold, running gangs found through their
   * hosts, the running gangs' timeline, the blocked jobs' reservation plans and the pending order
   * kept across sessions, attempts that would do nothing passed over). Default on; off only to
   * prove that they change no decision.
   */
  indices?: boolean;
}

/**
 * What the core keeps between turns, owned by whoever drives them (the leader, a simulation, a
 * test cluster, the auditor): caches that make a turn cheaper and never change what it decides.
 * One context serves one sequence of states at a time; make one per driver.
 */
export class TurnContext {
  /** The last session's host index, brought up to date by the next session. */
  readonly hosts = new HostIndexCache();
  /** The pending table by leaf as the last sessions read it. */
  readonly pending: PendingLeaves = new PartMemo();
  /** The pending jobs in order as the last session that tried them all read them. */
  readonly order = new PendingOrder();
  /** The running gangs' timeline as the last reservation plans read it. */
  readonly running = new RunningTimeline();
  /** The blocked jobs' reservation plans with their inputs, as the last sessions made them. */
  readonly plans = new KeptPlans();
  /** The deadlines (timeouts, runtime limits, guards, backoffs) as the last turns read them. */
  readonly deadlines = new Deadlines();
  /** Values many records of the state repeat (a finished member's), held once (`Writer.shared`): the state's values are the same. */
  readonly shared = new Map<string, object>();
  /** The buffer transactions are serialised into. */
  readonly scratch = new ByteScratch();
  /** Hex SHA-256 of bytes. */
  readonly digest: (bytes: Uint8Array) => string;
  /** Whether sessions use their indices (`TurnContextOptions.indices`). */
  readonly indices: boolean;

  constructor(options: TurnContextOptions = {}) {
    this.digest = options.digest ?? ((bytes) => bytesToHex(sha256(bytes)));
    this.indices = options.indices ?? true;
  }
}
