// The messages between a replica and its lease thread (leaseThread.ts, leaseWorker.ts).

/** What the lease thread starts with. */
export interface LeaseWorkerData {
  servers: string[];
  user?: string;
  pass?: string;
  id: string;
  leaseMs: number;
  /** Refreshes stop once the main loop showed no progress for this long (a wedged leader). */
  wedgedMs: number;
  /** One Int32: the leader's main loop counts its progress there (`LeaseThread.tick`). */
  progress: SharedArrayBuffer;
}

/**
 * What a replica tells its lease thread: refresh this lease while the main loop progresses (a null
 * revision: the one held already, under this term), or stop and say its revision.
 */
export type LeaseOrder = { type: 'hold'; term: number; revision: number | null } | { type: 'drop' };

/** What the lease thread tells its replica. */
export type LeaseNews =
  /** Connected, with the lease bucket open: ready to hold a lease. */
  | { type: 'ready' }
  /** Someone else holds the lease now: the term is over. */
  | { type: 'lost' }
  /** Refreshing stopped (a `drop`): the lease's last revision, for a release. */
  | { type: 'dropped'; revision: number | null }
  /** The main loop showed no progress for `wedgedMs`: refreshes stopped until it does. */
  | { type: 'stalled'; ms: number }
  /** The thread could not start (its connection): the lease is not refreshed. */
  | { type: 'failed'; message: string };
