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

/** How many messages a stream holds on one subject, as of one of its sequences. */
export interface SubjectCount {
  /** Messages stored on the subject. */
  messages: number;
  /** The stream's last sequence when they were counted: every one of them is at or below it. */
  lastSeq: number;
}

/** How many messages `stream` holds on one subject (no wildcards), and its last sequence then. */
export async function subjectCount(bus: Bus, stream: string, subject: string): Promise<SubjectCount> {
  const info = await (await natsOf(bus).jsm).streams.info(stream, { subjects_filter: subject });
  return { messages: info.state.subjects?.[subject] ?? 0, lastSeq: info.state.last_seq };
}

/** One copy of a clustered stream as its leader reports it. */
export interface StreamCopy {
  /** The server holding the copy. */
  name: string;
  /** Whether the leader counts the copy as caught up. */
  current: boolean;
  /** How many operations it is behind (0 when caught up, or not reported). */
  lag: number;
}

/** Every copy of a clustered stream, the leader's first (always current), or null when the answer came from no leader. */
export async function streamCopies(bus: Bus, stream: string): Promise<StreamCopy[] | null> {
  const info = await (await natsOf(bus).jsm).streams.info(stream);
  const leader = info.cluster?.leader;
  if (leader === undefined || leader === '') return null;
  return [{ name: leader, current: true, lag: 0 }, ...(info.cluster?.replicas ?? []).map((r) => ({ name: r.name, current: r.current, lag: r.lag ?? 0 }))];
}

/** The stream behind a KV bucket or an object store (`KV_<bucket>`, `OBJ_<bucket>`). */
export const bucketStream = { kv: (bucket: string): string => `KV_${bucket}`, objects: (bucket: string): string => `OBJ_${bucket}` };
