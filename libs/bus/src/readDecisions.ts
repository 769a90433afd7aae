import type { Msg } from '@nats-io/transport-node';
import { DECISIONS_STREAM, LOG_SEQ_HEADER } from './names.ts';
import { orderedBatches } from './orderedMessages.ts';
import type { BatchReadOptions } from './orderedMessages.ts';
import type { Bus } from './bus.ts';

/** One message as stored on MUSTER_DECISIONS. */
export interface StoredDecision {
  /** MUSTER_DECISIONS stream sequence. */
  seq: number;
  subject: string;
  /** `Nats-Msg-Id` (`muster:<logSeq>:<index>[:<node>]`), '' when absent. */
  msgId: string;
  /** The `Muster-Log-Seq` header, or null when absent or not a positive integer. */
  logSeq: number | null;
  /** The body as UTF-8 text. */
  data: string;
  /** The body as stored, when the reader was asked to keep it (`pullDecisionBatches` with `withBytes`). */
  bytes?: Uint8Array;
}

// decision messages are small: many per pull request
const DECISIONS_BATCH = 4096;

const decoder = new TextDecoder();

/** Every message of MUSTER_DECISIONS from `fromSeq` on (to its last sequence at call time), in stream order, with its msg id and log sequence. */
export async function* readDecisions(bus: Bus, opts: BatchReadOptions = {}): AsyncGenerator<StoredDecision, void, undefined> {
  for await (const batch of readDecisionBatches(bus, opts)) yield* batch;
}

/** `readDecisions` a batch (what has arrived) at a time. */
export async function* readDecisionBatches(bus: Bus, opts: BatchReadOptions = {}): AsyncGenerator<StoredDecision[], void, undefined> {
  for await (const batch of orderedBatches(bus, DECISIONS_STREAM, { batch: DECISIONS_BATCH, ...opts })) {
    const out: StoredDecision[] = new Array<StoredDecision>(batch.length);
    for (let i = 0; i < batch.length; i++) out[i] = decisionOf(batch[i]!.seq, batch[i]!);
    yield out;
  }
}

/** A message of MUSTER_DECISIONS at stream sequence `seq` (a JetStream or a core message), decoded (its body kept as stored too, `withBytes`). */
export function decisionOf(seq: number, m: Pick<Msg, 'subject' | 'data' | 'headers'>, withBytes = false): StoredDecision {
  const headers = m.headers;
  const logSeq = Number(headers?.get(LOG_SEQ_HEADER) ?? '');
  return {
    seq,
    subject: m.subject,
    msgId: headers?.get('Nats-Msg-Id') ?? '',
    logSeq: Number.isInteger(logSeq) && logSeq > 0 ? logSeq : null,
    data: decoder.decode(m.data),
    ...(withBytes ? { bytes: m.data } : {}),
  };
}
