import type { Bus } from './bus.ts';
import { natsOf } from './natsBus.ts';

/** What a stream holds, as its server reports it. */
export interface StreamState {
  /** Messages stored. */
  messages: number;
  /** Bytes stored. */
  bytes: number;
  /** The first stored sequence (0 when empty). */
  firstSeq: number;
  /** The last sequence ever stored (0 when none). */
  lastSeq: number;
  /** The server that leads the stream in a cluster ('' when it has no leader, or on one server). */
  leader: string;
  /** The answer is the stream's own: from its leader in a cluster, or from a server that is not clustered (not a leaderless member's copy). */
  authoritative: boolean;
}

/** What `stream` holds now; rejects when it does not exist (`isStreamNotFound`). */
export async function streamInfo(bus: Bus, stream: string): Promise<StreamState> {
  const info = await (await natsOf(bus).jsm).streams.info(stream);
  const s = info.state;
  const leader = info.cluster?.leader ?? '';
  // a server outside a cluster reports no cluster, or a cluster with no peers
  const standalone = info.cluster === undefined || (leader === '' && (info.cluster.replicas ?? []).length === 0 && info.config.num_replicas <= 1);
  return { messages: s.messages, bytes: s.bytes, firstSeq: s.first_seq, lastSeq: s.last_seq, leader, authoritative: leader !== '' || standalone };
}

/** How many messages `stream` holds on one subject (no wildcards). */
export async function messagesOnSubject(bus: Bus, stream: string, subject: string): Promise<number> {
  const info = await (await natsOf(bus).jsm).streams.info(stream, { subjects_filter: subject });
  return info.state.subjects?.[subject] ?? 0;
}
