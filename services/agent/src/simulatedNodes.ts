import type { NodeSpec } from '@muster/core';

/**
 * `count` simulated NodeSpecs with ids `sim-1` … `sim-<count>`, deterministic: a repeating mix of a
 * CPU node, a 4×A100 node (two NVLink domains of two) and an 8×H100 node (two domains of four),
 * in zones `a` and `b` alternately.
 */
export function simulatedNodes(count: number): NodeSpec[] {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`the number of simulated nodes must be a positive integer, got ${count}`);
  return Array.from({ length: count }, (_, k) => simulatedNode(k + 1));
}

function simulatedNode(i: number): NodeSpec {
  const id = `sim-${i}`;
  const zone = i % 2 === 1 ? 'a' : 'b';
  switch (i % 3) {
    case 1:
      return { id, labels: { zone, kind: 'cpu' }, capacity: { cpu: 16_000, memoryMb: 65_536, slots: 16 }, gpus: [] };
    case 2:
      return {
        id,
        labels: { zone, kind: 'gpu', gpu_model: 'A100' },
        capacity: { cpu: 32_000, memoryMb: 262_144, slots: 32 },
        gpus: gpus(4, 'A100', 81_920, 2),
      };
    default:
      return {
        id,
        labels: { zone, kind: 'gpu', gpu_model: 'H100' },
        capacity: { cpu: 64_000, memoryMb: 524_288, slots: 64 },
        gpus: gpus(8, 'H100', 81_920, 4),
      };
  }
}

function gpus(count: number, model: string, memoryMb: number, perDomain: number): NodeSpec['gpus'] {
  return Array.from({ length: count }, (_, id) => ({ id, memoryMb, model, nvlinkDomain: Math.floor(id / perDomain) }));
}
