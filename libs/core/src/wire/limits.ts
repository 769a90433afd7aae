// The size limits of the wire (DESIGN.md §3), declared once: the bus enforces them, the turn cuts
// transactions under them.

/** nats-server's default `max_payload` (1 MiB), which the streams' `max_msg_size` matches: no message is larger. */
export const MAX_PAYLOAD_BYTES = 1_048_576;

/**
 * The largest encoded log transaction the bus appends, in bytes: under MAX_PAYLOAD_BYTES with
 * room for the headers (msg id, expected sequence, the log sequence header).
 */
export const MAX_TRANSACTION_BYTES = 1_000_000;

// The two cut thresholds below are derived from MAX_TRANSACTION_BYTES at exactly the values the
// log was written with (400,000 and 900,000 bytes of events' JSON): a cut point is part of the
// log's bytes and of the state between transactions (each one's envelope is applied before its
// events), so changing either would change every golden history and every leader's decisions.

/** An ingest transaction closes before the input whose events would bring its events' JSON past this many bytes (two fifths of the limit). */
export const INGEST_TRANSACTION_BYTES = (MAX_TRANSACTION_BYTES * 2) / 5;

/** A session transaction closes before the gang whose events would bring its events' JSON past this many bytes (the limit less 100,000 bytes for the envelope). */
export const SESSION_TRANSACTION_BYTES = MAX_TRANSACTION_BYTES - 100_000;
