/**
 * Whether two JSON values are equal as canonical JSON prints them (key order ignored, undefined
 * members absent), without building strings.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let members = 0;
  for (const key in x) {
    const value = x[key];
    if (value === undefined) continue;
    members++;
    if (!sameJson(value, y[key])) return false;
  }
  for (const key in y) if (y[key] !== undefined) members--;
  return members === 0;
}

/** The dotted path of the first field where two JSON values differ ('' when they differ as a whole), or null when equal. */
export function firstDifference(a: unknown, b: unknown, path = ''): string | null {
  if (sameJson(a, b)) return null;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return path;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Array.isArray(a)
    ? Array.from({ length: Math.max(a.length, (b as unknown[]).length) }, (_, i) => String(i))
    : [...new Set([...Object.keys(x), ...Object.keys(y)])].sort();
  for (const key of keys) {
    const inner = firstDifference(x[key], y[key], path === '' ? key : `${path}.${key}`);
    if (inner !== null) return inner;
  }
  return path;
}
