/** The size class of a gang of `members` members: `1`, `2`, then powers of two (`3-4`, `5-8`, `9-16`, ...). */
function sizeClass(members: number): string {
  if (members <= 2) return String(members);
  let top = 4;
  while (top < members) top *= 2;
  return `${top / 2 + 1}-${top}`;
}

/** How many jobs of each size class, classes from the smallest up (the workload Summary's `sizes`). */
export function sizeCounts(sizes: Iterable<number>): Record<string, number> {
  const counts = new Map<number, number>();
  for (const members of sizes) counts.set(members, (counts.get(members) ?? 0) + 1);
  const byClass: Record<string, number> = {};
  for (const [members, n] of [...counts].sort((a, b) => a[0] - b[0])) {
    const name = sizeClass(members);
    byClass[name] = (byClass[name] ?? 0) + n;
  }
  return byClass;
}
