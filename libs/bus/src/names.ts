// Stream, bucket and header names of the public contract v1 (DESIGN.md §2); streams/*.json defines
// the same names, subjects.ts the subjects.

/** The inputs stream: submissions, cancels, closes and node reports. */
export const IN_STREAM = 'MUSTER_IN';
/** The transaction log stream, written by the leader only. */
export const LOG_STREAM = 'MUSTER_LOG';
/** The stream of published decisions, binds and stops. */
export const DECISIONS_STREAM = 'MUSTER_DECISIONS';
/** The stream of members' output lines (DESIGN.md §15), limited by age and size. */
export const OUTPUT_STREAM = 'MUSTER_OUTPUT';
/** The header on every decision message that names the log sequence it was derived from. */
export const LOG_SEQ_HEADER = 'Muster-Log-Seq';
/** The KV bucket that holds the leader lease. */
export const LEADER_BUCKET = 'muster_leader';
/** The key of the leader lease in its bucket. */
export const LEADER_KEY = 'leader';
/** The object store that holds state snapshots. */
export const SNAPSHOT_BUCKET = 'muster_snapshots';
/** The largest encoded transaction `appendTransactions` accepts, in bytes (the core's wire limit). */
export { MAX_TRANSACTION_BYTES } from '@muster/core';
