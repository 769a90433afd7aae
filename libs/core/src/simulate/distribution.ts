/** The figures of a workload's wait or slowdown (DESIGN.md §11): null everywhere when no job started. */
export interface Distribution {
  mean: number | null;
  p50: number | null;
  p95: number | null;
  max: number | null;
}

/** Rounds to three decimals, so that printed figures stay short (the same values give the same bytes). */
function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** The mean, nearest-rank 50th and 95th percentiles and maximum of `values`, each rounded to three decimals. */
export function distribution(values: readonly number[]): Distribution {
  if (values.length === 0) return { mean: null, p50: null, p95: null, max: null };
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p: number): number => sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1]!;
  let sum = 0;
  for (const v of sorted) sum += v;
  return { mean: round3(sum / sorted.length), p50: round3(rank(50)), p95: round3(rank(95)), max: round3(sorted[sorted.length - 1]!) };
}
