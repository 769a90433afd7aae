import type { Logger } from 'pino';
import type { Bus, LeaderLease } from '@muster/bus';
import type { ResolvedOptions } from './config.ts';
import type { HeartbeatMonitor } from './heartbeatMonitor.ts';
import type { StartupWatch } from './startupWatch.ts';

/** Everything a replica talks to. */
export interface ReplicaDeps {
  bus: Bus;
  /**
   * A second connection, for snapshot uploads (default: `bus`): megabytes of chunks on the
   * appends' socket would queue ahead of them, and hold every decision behind the upload.
   */
  bulkBus?: Bus;
  lease: LeaderLease;
  /**
   * The lease for a standby's looks, its calls bounded by `standbyRequestMs(leaseMs)` (default:
   * `lease`): a standby's tick must not sit in one request for long (a hung request delays a takeover).
   */
  standbyLease?: LeaderLease;
  heartbeats: HeartbeatMonitor;
  opts: ResolvedOptions;
  log: Logger;
  /** Told each step of the rebuild, so a start that takes long says where it is. */
  startup?: StartupWatch;
  /** Called with the wall time (seconds) of each leader turn that ran a session (the metrics). */
  onSession?: (seconds: number) => void;
}
