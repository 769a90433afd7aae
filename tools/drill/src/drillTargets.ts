import { DECISIONS_STREAM, IN_STREAM, LEADER_BUCKET, LOG_STREAM, SNAPSHOT_BUCKET, bucketStream, streamCopies } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { within } from '@muster/stack';
import type { NatsServerHandle } from '@muster/stack';
import type { FaultContext, FaultRecord } from './drillFaults.ts';
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
  if (ctx.busy.has(leader.id)) {
    record.skipped = `leader ${leader.id} is under another fault`;
    return null;
  }
  if (healthyOthers(ctx, leader.id).length === 0) {
    record.skipped = 'no healthy standby to take over';
    return null;
  }
  ctx.busy.add(leader.id);
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

/** Every stream of muster's, each with a copy on every NATS node (R3). */
const STREAMS = [IN_STREAM, LOG_STREAM, DECISIONS_STREAM, bucketStream.kv(LEADER_BUCKET), bucketStream.objects(SNAPSHOT_BUCKET)];

/**
 * Waits until every stream's copy on NATS node `name` is current again, as each stream's leader
 * reports it (`cluster.replicas[].current`, no lag), and says how long that took; throws after
 * `timeoutMs` naming the streams still behind. Until then the node is not free for the next NATS
 * fault: a node that answers but has not caught up is out in the sense R3 counts, and taking
 * another node then leaves one current copy (the 15-minute soak lost 1,100 acknowledged
 * transactions when a restart followed a full disk's recovery too soon).
 */
export async function awaitNodeCurrent(bus: Bus, name: string, timeoutMs = 120_000): Promise<number> {
  const started = Date.now();
  let behind: string[] = STREAMS;
  while (Date.now() - started < timeoutMs) {
    const answers = await Promise.all(
      STREAMS.map(async (stream) => {
        const copies = await streamCopies(bus, stream).catch(() => null);
        const copy = copies?.find((c) => c.name === name);
        return copy !== undefined && copy.current && copy.lag === 0 ? null : `${stream}${copy === undefined ? '' : ` (lag ${copy.lag})`}`;
      }),
    );
    behind = answers.filter((a): a is string => a !== null);
    if (behind.length === 0) return Date.now() - started;
    await sleep(250);
  }
  throw new Error(`nats ${name}'s copies not current ${timeoutMs} ms after it came back: ${behind.join(', ')}`);
}
