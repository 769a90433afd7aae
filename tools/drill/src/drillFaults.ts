import type { FaultContext, FaultRecord } from './drillFaultRecord.ts';
import { awaitNodeCurrent } from './drillTargets.ts';
import { drillFault } from './faults/index.ts';
import type { FaultKind } from './faults/index.ts';

/** Injects one fault of `kind` and brings back what it took down; never throws (errors are recorded). */
export async function injectFault(n: number, kind: FaultKind, ctx: FaultContext): Promise<FaultRecord> {
  const record: FaultRecord = { n, kind, target: null, at: Date.now(), endedAt: 0, skipped: null, error: null, nextLeader: null };
  let natsNode = false;
  try {
    const fault = drillFault(kind);
    natsNode = fault.natsNode;
    record.skipped = fault.unavailable?.() ?? null;
    if (record.skipped === null) await fault.inject(record, ctx);
  } catch (err) {
    record.error = err instanceof Error ? err.message : String(err);
  } finally {
    record.endedAt = Date.now();
    // a NATS node is free for the next NATS fault only once its copies have caught up
    const node = natsNode && record.skipped === null ? ctx.cluster.nats.nodes.find((n) => n.name === record.target) : undefined;
    if (node !== undefined && node.running) {
      try {
        record.caughtUpMs = await awaitNodeCurrent(ctx.cluster.bus, node.name, 120_000, node.monitorPort, ctx.cutShort);
      } catch (err) {
        record.error ??= err instanceof Error ? err.message : String(err);
      }
    }
    if (record.target !== null) ctx.busy.delete(record.target);
  }
  ctx.progress(faultLine(record));
  return record;
}

/** One progress line for a fault. */
export function faultLine(r: FaultRecord): string {
  const what = `fault ${r.n} ${r.kind}${r.target === null ? '' : ` ${r.target}`}`;
  if (r.skipped !== null) return `${what}: skipped (${r.skipped})`;
  if (r.error !== null) return `${what}: ERROR ${r.error}`;
  const next = r.nextLeader === null ? '' : `, ${r.nextLeader} leads`;
  const current = r.caughtUpMs === undefined ? '' : `, its copies current ${r.caughtUpMs} ms after`;
  const stalled = r.stalledRestarts === undefined ? '' : `, restarted ${r.stalledRestarts} more time(s) when its store stopped catching up`;
  return `${what}: done in ${r.endedAt - r.at} ms${current}${stalled}${drillFault(r.kind).detail?.(r) ?? ''}${next}`;
}
