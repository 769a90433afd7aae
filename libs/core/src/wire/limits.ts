// The size limits of the wire (DESIGN.md §3), declared once: the bus enforces them, the turn cuts
// transactions under them.

/** nats-server's default `max_payload` (1 MiB), which the streams' `max_msg_size` matches: no message is larger. */
export const MAX_PAYLOAD_BYTES = 1_048_576;

/**
 * The largest encoded log transaction the bus appends, in bytes: under MAX_PAYLOAD_BYTES with
 * room for the headers (msg id, expected sequence, the log sequence header).
 */
export const MAX_TRANSACTION_BYTES = 1_000_000;
