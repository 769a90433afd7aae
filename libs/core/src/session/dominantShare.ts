import type { AllocationResources } from '../events.ts';
import type { Resources } from '../resources.ts';

/**
 * DRF dominant share: the largest of allocated CPU, memory and GPUs as fractions of the capacity
 * of up nodes; a zero denominator contributes 0.
 */
export function dominantShare(usage: AllocationResources | undefined, capacity: Resources): number {
  if (usage === undefined) return 0;
  const cpu = capacity.cpu > 0 ? usage.cpu / capacity.cpu : 0;
  const memory = capacity.memoryMb > 0 ? usage.memoryMb / capacity.memoryMb : 0;
  const gpus = capacity.gpus > 0 ? usage.gpus / capacity.gpus : 0;
  return Math.max(cpu, memory, gpus);
}
