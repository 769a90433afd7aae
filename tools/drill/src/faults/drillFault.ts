import type { FaultContext, FaultRecord } from '../drillFaultRecord.ts';

/** One fault kind of the drill: what it needs, how it injects and recovers, and how it is described. */
export interface DrillFault<K extends string = string> {
  /** The name `--faults` takes and the report prints. */
  kind: K;
  /** One line for `muster drill --faults list`: what it does. */
  help: string;
  /** What this machine must have for it (root, faketime, …), or null when nothing. */
  needs: string | null;
  /** Whether a drill injects it unless `--faults` says otherwise. */
  inDefault: boolean;
  /** Whether its target is a NATS node (freed for the next NATS fault only once that node's copies are current). */
  natsNode: boolean;
  /** Why this machine cannot inject it (the record says so and it is skipped), or null when it can. */
  unavailable?: () => string | null;
  /** Injects it and brings back what it took down; the record says whom it hit and what it saw. */
  inject: (record: FaultRecord, ctx: FaultContext) => Promise<void>;
  /** The leader it took down and when (a takeover the report times), or null when it hit none. */
  leaderHit?: (record: FaultRecord) => { from: string; at: number } | null;
  /** The kind's own part of its report line (what it measured while it acted), or ''. */
  detail?: (record: FaultRecord) => string;
}
