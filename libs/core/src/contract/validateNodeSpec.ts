import { nodeSpecSchema } from './nodeSpecSchema.ts';
import { protoKeyIssue, specIssue, specIssueFromZod } from './specIssueFromZod.ts';
import type { NodeSpec, Validated } from './types.ts';

const SUBJECT = 'node spec';

/**
 * Validates a NodeSpec from outside (DESIGN.md §4) and normalises it: defaults filled in, labels
 * in key order, GPU devices sorted by id; or the first issue, by path.
 */
export function validateNodeSpec(input: unknown): Validated<NodeSpec> {
  const parsed = nodeSpecSchema.safeParse(input, { reportInput: true });
  if (!parsed.success) return { ok: false, error: specIssueFromZod(parsed.error.issues, nodeSpecSchema, SUBJECT) };
  const wire = parsed.data;
  const proto = protoKeyIssue((input as { labels?: unknown }).labels, 'labels', 'label name', SUBJECT);
  if (proto !== undefined) return { ok: false, error: proto };
  const seen = new Set<number>();
  for (const [i, gpu] of wire.gpus.entries()) {
    if (seen.has(gpu.id)) return { ok: false, error: specIssue(`gpus.${i}.id`, `duplicate GPU id ${gpu.id}`, SUBJECT) };
    seen.add(gpu.id);
  }
  if (wire.ports !== undefined && wire.ports.from > wire.ports.to) {
    return { ok: false, error: specIssue('ports.from', `${wire.ports.from} is above ports.to ${wire.ports.to}`, SUBJECT) };
  }
  const labels = Object.fromEntries(Object.keys(wire.labels).sort().map((key) => [key, wire.labels[key] as string | number]));
  const spec: NodeSpec = {
    id: wire.id,
    labels,
    capacity: {
      cpu: wire.capacity.cpu,
      memoryMb: wire.capacity.memoryMb,
      ...(wire.capacity.slots === undefined ? {} : { slots: wire.capacity.slots }),
    },
    gpus: wire.gpus
      .map((gpu) => ({ id: gpu.id, memoryMb: gpu.memoryMb, model: gpu.model, nvlinkDomain: gpu.nvlinkDomain }))
      .sort((a, b) => a.id - b.id),
    // absent stays absent: a node registered without them normalises and hashes as before v1.2
    ...(wire.address === undefined ? {} : { address: wire.address }),
    ...(wire.ports === undefined ? {} : { ports: { from: wire.ports.from, to: wire.ports.to } }),
  };
  return { ok: true, value: spec };
}
