import type { NatsConnection } from '@nats-io/transport-node';
import { isTimeout } from './isWrongLastSequence.ts';
import { DECISIONS_STREAM } from './names.ts';
import { isNoResponders, isPermissionDenied } from './requestErrors.ts';

/**
 * What a NATS server said when asked about a stream: JetStream `served` it, is `unavailable`
 * through it, the look was `refused` (this user may not ask), or `unknown` (the connection is
 * away, or the server answers nothing at all: the ping watchdog's case, not this one).
 */
export type JetStreamAnswer = 'served' | 'unavailable' | 'refused' | 'unknown';

// Every muster user may ask for this stream's info (deploy/nats/accounts.conf). A node cut off
// from its peers answers it from its own copy with no leader, once it has stopped waiting for the
// old one (measured on 2.9.10: about 5 s of timeouts, then leader-less answers); `$JS.API.INFO`
// was answered as usual for up to 13 s after the cut.
const PROBE_SUBJECT = `$JS.API.STREAM.INFO.${DECISIONS_STREAM}`;

// A copy counts toward the leader's quorum when the leader heard from it this recently: raft
// heartbeats kept it under 1 s on an idle healthy cluster here, while a leader cut off from its
// peers went on answering as the leader, its copies silent, for 19 s.
const HEARD_NS = 3_000_000_000;

interface StreamInfoReply {
  error?: { code?: number };
  cluster?: { leader?: string; replicas?: { active?: number; offline?: boolean }[] };
}

/** Asks the server `nc` is on about a stream, waiting up to `timeoutMs`, and says what it shows of JetStream. */
export async function probeJetStream(nc: NatsConnection, timeoutMs: number): Promise<JetStreamAnswer> {
  let reply: StreamInfoReply;
  try {
    const msg = await nc.request(PROBE_SUBJECT, '', { timeout: timeoutMs });
    reply = JSON.parse(new TextDecoder().decode(msg.data)) as StreamInfoReply;
  } catch (err) {
    if (isPermissionDenied(err)) return 'refused';
    // nobody serves the JetStream API through this server
    if (isNoResponders(err)) return 'unavailable';
    // JetStream silent while plain NATS answers: the request reached a server that could not forward it
    if (isTimeout(err)) return (await answersPing(nc, timeoutMs)) ? 'unavailable' : 'unknown';
    return 'unknown';
  }
  // 503: "JetStream system temporarily unavailable"
  if (reply.error?.code === 503) return 'unavailable';
  // any other error ("stream not found") came from the meta leader, which this server reaches
  if (reply.error !== undefined || reply.cluster === undefined) return 'served';
  return leadsWithQuorum(reply.cluster) ? 'served' : 'unavailable';
}

// Whether the answer came from a leader that hears from a majority of the stream's copies (a single
// server has no cluster, and a copy that knows no leader answers without one).
function leadsWithQuorum(cluster: NonNullable<StreamInfoReply['cluster']>): boolean {
  if ((cluster.leader ?? '') === '') return false;
  const replicas = cluster.replicas ?? [];
  const heard = replicas.filter((r) => r.offline !== true && (r.active ?? Number.POSITIVE_INFINITY) < HEARD_NS).length;
  // the leader counts itself
  return (heard + 1) * 2 > replicas.length + 1;
}

// Whether the server answers a ping within `timeoutMs`.
async function answersPing(nc: NatsConnection, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([nc.flush().then(() => true, () => false), late]);
  } finally {
    clearTimeout(timer);
  }
}
