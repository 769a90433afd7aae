/** A seeded pseudo-random source: the same seed gives the same workload and fault schedule. */
export interface DrillRandom {
  /** A number in [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** An exponentially distributed interval with this mean (for faults at a random rate). */
  exponential(mean: number): number;
}

/** mulberry32: small, fast and good enough to spread faults and job shapes; not for secrets. */
export function drillRandom(seed: number): DrillRandom {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new RangeError('pick from an empty array');
      return items[Math.floor(next() * items.length)] as T;
    },
    exponential: (mean) => -mean * Math.log(1 - next()),
  };
}
