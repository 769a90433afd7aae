import type { AllocationResources } from '../events.ts';
import type { DecayedUse } from '../state.ts';

// Decayed usage for fair share (DESIGN.md §12, `policy.fairShareHalfLifeMs`): D(t), the integral
// of a queue's use over time with each moment weighed by 2^(−age / halfLife). Between two changes
// the use u is constant, so D(t0 + Δ) = D(t0)·e^(−kΔ) + u·(1 − e^(−kΔ))/k with k = ln 2 / halfLife.
// k·D is in resource units: for a use held long enough it tends to that use.

/** A queue's decayed use advanced from its record to stamped time `at`, under use `use` since then. */
export function decayedAt(was: DecayedUse, use: AllocationResources | undefined, at: number, halfLifeMs: number): DecayedUse {
  const dt = Math.max(0, at - was.at);
  if (dt === 0) return was;
  const k = Math.LN2 / halfLifeMs;
  const keep = Math.exp(-k * dt);
  const gain = (1 - keep) / k;
  return {
    cpu: was.cpu * keep + (use?.cpu ?? 0) * gain,
    memoryMb: was.memoryMb * keep + (use?.memoryMb ?? 0) * gain,
    gpus: was.gpus * keep + (use?.gpus ?? 0) * gain,
    at,
  };
}

/** A queue's decayed use at `at`, in resource units (k·D), from its record and its use now. */
export function decayedRate(was: DecayedUse | undefined, use: AllocationResources | undefined, at: number, halfLifeMs: number): AllocationResources {
  const k = Math.LN2 / halfLifeMs;
  const d = decayedAt(was ?? { cpu: 0, memoryMb: 0, gpus: 0, at }, use, at, halfLifeMs);
  return { cpu: d.cpu * k, memoryMb: d.memoryMb * k, gpus: d.gpus * k };
}
