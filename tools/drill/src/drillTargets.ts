import { DECISIONS_STREAM, IN_STREAM, LEADER_BUCKET, LOG_STREAM, SNAPSHOT_BUCKET, bucketStream, streamCopies, streamInfo } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { within } from '@muster/stack';
import type { NatsServerHandle } from '@muster/stack';
import type { FaultContext, FaultRecord } from './drillFaultRecord.ts';
import { sleep } from './drillSleep.ts';

/** A replica other than `id` that runs, is not paused and is not under a fault: someone who can take over. */
function healthyOthers(ctx: FaultContext, id: string): string[] {
  return ctx.cluster.replicaIds.filter((r) => r !== id && !ctx.busy.has(r) && !ctx.cluster.paused.has(r) && ctx.cluster.replica(r).running);
}

/** The leader as the fault's target (marked busy), or null (the record says why) when there is none free or no standby could take over. */
export async function currentLeader(record: FaultRecord, ctx: FaultContext): Promise<string | null> {
  const leader = await ctx.cluster.leader(5_000);
  if (leader === null) {
    record.skipped = 'no replica answered as leader';
    return null;
  }
  if (healthyOthers(ctx, leader.id).length === 0) {
    record.skipped = 'no healthy standby to take over';
    return null;
  }
  // looked at and claimed in one step, before the next wait: two kill-leader faults that both
  // looked while the other waited both killed s1 and both started it again (two processes as s1
  // fought over the lease for the rest of an hour soak)
  if (ctx.busy.has(leader.id)) {
    record.skipped = `leader ${leader.id} is under another fault`;
    return null;
  }
  ctx.busy.add(leader.id);
  // and one that says it stands by: not one still rebuilding (no answer yet), nor one that still
  // believes it leads an older term, nor one that refuses to lead
  const statuses = await ctx.cluster.statuses(1_000);
  const standing = healthyOthers(ctx, leader.id).filter((r) => {
    const s = statuses.get(r);
    return s !== null && s !== undefined && s.role === 'standby' && s.refusedBecause === null;
  });
  if (standing.length === 0) {
    ctx.busy.delete(leader.id);
    record.skipped = 'no standby answers as one to take over';
    return null;
  }
  record.target = leader.id;
  return leader.id;
}

/**
 * A NATS node chosen at random as the fault's target (marked busy), or null (the record says why)
 * when one is down or under a fault already: one node out at a time, as two would take the R3
 * streams' quorum, which no drill should expect to survive.
 */
export function pickNatsNode(record: FaultRecord, ctx: FaultContext): NatsServerHandle | null {
  const nodes = ctx.cluster.nats.nodes;
  if (nodes.some((node) => !node.running || ctx.busy.has(node.name))) {
    record.skipped = 'another NATS node is down';
    return null;
  }
  const node = ctx.random.pick(nodes);
  ctx.busy.add(node.name);
  record.target = node.name;
  return node;
}

/** Restarts a stopped NATS node; throws when it is not ready within 45 s. */
export async function restartNatsNode(node: NatsServerHandle): Promise<void> {
  if ((await within(node.restart().then(() => true), 45_000)) === null) throw new Error(`nats ${node.name} not ready 45 s after its restart`);
}

/** Kills NATS node `node` and starts it again on the store it has (a copy that stopped filling resumes). */
export async function restartNatsNodeAgain(node: NatsServerHandle): Promise<void> {
  await node.kill('SIGKILL');
  await restartNatsNode(node);
}

/** Every stream of muster's, each with a copy on every NATS node (R3). */
const STREAMS = [IN_STREAM, LOG_STREAM, DECISIONS_STREAM, bucketStream.kv(LEADER_BUCKET), bucketStream.objects(SNAPSHOT_BUCKET)];

/**
 * What a restarted node's copy of each stream must hold: its leader's last sequence at the first
 * look that had an answer. Not at every look: a stream written to all the time (the lease, every
 * 200 ms) trails its leader's end at each of them.
 */
class CatchUpTargets {
  private readonly first = new Map<string, number>();

  /** Why the copy of `stream` that holds to `held` is behind (null: it is not), given its leader's last sequence now (null: no answer). */
  behind(stream: string, leaderLast: number | null, held: number | undefined): string | null {
    if (leaderLast !== null && !this.first.has(stream)) this.first.set(stream, leaderLast);
    const target = this.first.get(stream);
    if (target === undefined) return `${stream} (no leader's answer)`;
    if (held === undefined) return `${stream} (its store not read)`;
    return held >= target ? null : `${stream} (its store holds to ${held} of ${target})`;
  }

  /** Whether `stream` has a target yet (a copy behind one with none is not evidence of a stall). */
  has(stream: string): boolean {
    return this.first.has(stream);
  }
}

/**
 * Waits until every stream's copy on NATS node `name` is current again, as each stream's leader
 * reports it (`cluster.replicas[].current`, no lag), and, when its `monitorPort` is given, as the
 * node's own store holds it (`/jsz`: as far as `CatchUpTargets` asks);
 * says how long that took; throws after `timeoutMs` naming the streams still behind. Until then the
 * node is not free for the next NATS fault: a node that answers but has not caught up is out in the
 * sense R3 counts, and taking another node then leaves one current copy (the 15-minute soak lost
 * 1,100 acknowledged transactions when a restart followed a full disk's recovery too soon). The
 * leader's word is not enough for a node restarted on an empty store: nats-server 2.9.10 counts
 * it current once its raft log is, while its store is still being sent the stream's messages (a
 * consumer placed on it meanwhile delivers from sequence 1).
 */
export async function awaitNodeCurrent(bus: Bus, name: string, timeoutMs = 120_000, monitorPort?: number, cutShort?: AbortSignal): Promise<number> {
  const started = Date.now();
  let behind: string[] = STREAMS;
  const targets = new CatchUpTargets();
  while (Date.now() - started < timeoutMs) {
    if (cutShort?.aborted === true) throw new Error(`nats ${name}'s copies were still behind when the drill's bound on its faults ran out: ${behind.join(', ')}`);
    const answers = await Promise.all(
      STREAMS.map(async (stream) => {
        const [copies, info] = await Promise.all([streamCopies(bus, stream).catch(() => null), streamInfo(bus, stream).catch(() => null)]);
        const copy = copies?.find((c) => c.name === name);
        const current = copy !== undefined && copy.current && copy.lag === 0;
        return { stream, current, leaderLast: info?.authoritative === true ? info.lastSeq : null, lag: copy?.lag };
      }),
    );
    const held = monitorPort === undefined ? null : await storedLastSeqs(monitorPort);
    behind = answers.flatMap((a) => {
      if (!a.current) return [`${a.stream}${a.lag === undefined ? '' : ` (lag ${a.lag})`}`];
      if (monitorPort === undefined) return [];
      const why = targets.behind(a.stream, a.leaderLast, held?.get(a.stream));
      return why === null ? [] : [why];
    });
    if (behind.length === 0) return Date.now() - started;
    await sleep(250);
  }
  throw new Error(`nats ${name}'s copies not current ${timeoutMs} ms after it came back: ${behind.join(', ')}`);
}

/** The streams nothing deletes from (deny_delete, deny_purge, no per-subject limit): a copy of one is whole only without holes. */
export const APPEND_ONLY: ReadonlySet<string> = new Set([IN_STREAM, LOG_STREAM, DECISIONS_STREAM]);

/**
 * Each stream's last sequence in one node's own store, from its monitoring port (`/jsz`), or null
 * when it does not answer within `timeoutMs`. For a stream nothing deletes from, a copy with a hole (fewer messages
 * than its first to last sequence span) counts only to its first sequence plus its messages, less
 * one: a node restarted on an empty store and then elected MUSTER_LOG's leader served a log that
 * ended, for every reader, where such a hole began.
 */
export async function storedLastSeqs(monitorPort: number, timeoutMs = 2_000): Promise<Map<string, number> | null> {
  try {
    const res = await fetch(`http://127.0.0.1:${monitorPort}/jsz?streams=true`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return null;
    type Detail = { name: string; state?: { first_seq?: number; last_seq?: number; messages?: number } };
    const jsz = (await res.json()) as { account_details?: { stream_detail?: Detail[] }[] };
    const out = new Map<string, number>();
    for (const account of jsz.account_details ?? []) {
      for (const st of account.stream_detail ?? []) {
        const last = st.state?.last_seq ?? 0;
        const whole = (st.state?.first_seq ?? 0) + (st.state?.messages ?? 0) - 1;
        out.set(st.name, APPEND_ONLY.has(st.name) && last > 0 ? Math.min(last, whole) : last);
      }
    }
    return out;
  } catch {
    return null;
  }
}

/** How long a restarted node's copy may stay behind without a new message before it is restarted again. */
export const COPY_STALL_MS = 10_000;

/** How many times a node whose copy stopped catching up is restarted (`recoverStalledNode`, a full disk's recovery), each time on its own store. */
export const STALLED_RESTARTS = 5;

/**
 * After `kind` brought NATS node `node` back: waits until its own store has caught up, restarting
 * it on its own store when a copy stops filling, as an operator would: nats-server 2.9.10 left one
 * at 7,843 of 8,839 through three restarts on its store. Never on an empty store any more: that was
 * the remedy for a copy that caught up from the stream's snapshot and then stopped at the first
 * append expecting a last msg id ("A copy wedged by the fence", docs/drills.md); muster's appends
 * expect only the last sequence since contract v1.2, and such a copy catches up.
 */
export async function recoverStalledNode(kind: string, node: NatsServerHandle, record: FaultRecord, ctx: FaultContext): Promise<void> {
  await catchUpOrRestart(
    ctx.cluster.bus,
    node,
    () => restartNatsNodeAgain(node),
    (attempt) => {
      record.stalledRestarts = attempt;
      ctx.progress(`${kind} ${node.name}: its store stopped catching up (${COPY_STALL_MS} ms without a message while behind the leaders): restarting it again on its store`);
    },
    ctx.cutShort,
    STALLED_RESTARTS,
  );
}

/**
 * Waits until `node`'s own store has caught up (`awaitStoreCaughtUp`), bringing it back again with
 * `restart` each time a copy stops filling for `COPY_STALL_MS` (as an operator would: a second start has
 * resumed such a copy at once), at most `restarts` times; calls `onStall` before each and throws
 * when it still stalls after them.
 */
export async function catchUpOrRestart(
  bus: Bus,
  node: NatsServerHandle,
  restart: (attempt: number) => Promise<void>,
  onStall: (attempt: number) => void,
  cutShort?: AbortSignal,
  restarts = 2,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const caughtUp = await awaitStoreCaughtUp(bus, node, COPY_STALL_MS, cutShort);
    if ('ms' in caughtUp) return;
    if (cutShort?.aborted === true) throw new Error(`nats ${node.name}'s store was still behind when the drill's bound on its faults ran out: ${caughtUp.behind.join(', ')}`);
    if (attempt > restarts) throw new Error(`nats ${node.name}'s store stopped catching up ${attempt} times after its restart: ${caughtUp.behind.join(', ')}`);
    onStall(attempt);
    await restart(attempt);
  }
}

/**
 * Waits until NATS node `node`'s own store holds every stream as far as `CatchUpTargets` asks, and
 * says how long that took; or names the streams behind when one of them gained no
 * message for `stallMs` (a copy whose catch-up stopped: after a restart on an empty store,
 * nats-server 2.9.10 once left MUSTER_LOG's copy at 8,433 of 24,651 for minutes while the
 * stream's leader reported it current; a second restart resumed it at once) or `timeoutMs` passed.
 */
async function awaitStoreCaughtUp(bus: Bus, node: NatsServerHandle, stallMs: number, cutShort?: AbortSignal, timeoutMs = 120_000): Promise<{ ms: number } | { behind: string[] }> {
  const started = Date.now();
  // each stream's highest last sequence seen in the node's store, and when it last grew
  const seen = new Map<string, { last: number; at: number }>();
  // twice: to where the leaders were at the first look, then to where they were once it got
  // there. A copy that caught up from the stream's snapshot stopped at the first append after it
  // while appends expected a last msg id (docs/drills.md), just past the first target
  let targets = new CatchUpTargets();
  let round = 1;
  let behind: string[] = STREAMS;
  while (Date.now() - started < timeoutMs && cutShort?.aborted !== true) {
    const leaders = await Promise.all(STREAMS.map((stream) => streamInfo(bus, stream).then((i) => (i.authoritative ? i.lastSeq : null), () => null)));
    const held = await storedLastSeqs(node.monitorPort);
    const now = Date.now();
    let stalled = false;
    behind = [];
    STREAMS.forEach((stream, i) => {
      const last = held?.get(stream);
      const before = seen.get(stream);
      if (before === undefined || (last ?? -1) > before.last) seen.set(stream, { last: last ?? -1, at: now });
      const why = targets.behind(stream, leaders[i] ?? null, last);
      if (why === null) return;
      behind.push(why);
      if (targets.has(stream) && now - (seen.get(stream)?.at ?? now) > stallMs) stalled = true;
    });
    if (behind.length === 0) {
      if (round === 2) return { ms: now - started };
      round = 2;
      targets = new CatchUpTargets();
      continue;
    }
    if (stalled) return { behind };
    await sleep(250);
  }
  return { behind };
}
