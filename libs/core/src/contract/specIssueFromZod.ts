import { z } from 'zod';
import type { SpecIssue } from './types.ts';

type Issue = z.core.$ZodIssue;

/** Joins a path with dots, indices as numbers: `['roles', 1, 'count']` → `roles.1.count`; root → ''. */
export function joinPath(path: readonly PropertyKey[]): string {
  return path.map(String).join('.');
}

/** A `path: message` issue, where the message names the field (or `subject` at the root). */
export function specIssue(path: string, detail: string, subject: string): SpecIssue {
  return { path, message: `${path === '' ? subject : path}: ${detail}` };
}

/**
 * The one issue to report from a failed zod parse: an unknown field first (a typo there often
 * causes a second, misleading "required" issue), otherwise zod's first issue, as a `SpecIssue`
 * whose message names the field. Parse with `reportInput: true` so that messages can quote values.
 */
export function specIssueFromZod(issues: readonly Issue[], schema: z.ZodType, subject: string): SpecIssue {
  const unknown = issues.find((issue) => issue.code === 'unrecognized_keys');
  if (unknown !== undefined) {
    const key = unknown.keys[0] as string;
    const suggestion = closest(key, keysAt(schema, unknown.path));
    const hint = suggestion === undefined ? '' : ` (did you mean '${suggestion}'?)`;
    return specIssue(joinPath([...unknown.path, key]), `unknown field${hint}`, subject);
  }
  const first = issues[0] as Issue;
  // z.int() reports the safe-integer bound before the schema's own bound at the same path
  const tighter = issues.find((issue) => issue !== first && (issue.code === 'too_big' || issue.code === 'too_small')
    && issue.origin === 'number' && joinPath(issue.path) === joinPath(first.path));
  const chosen = first.code === 'too_big' || first.code === 'too_small' ? (tighter ?? first) : first;
  return specIssue(joinPath(chosen.path), describeIssue(chosen, schema), subject);
}

/**
 * zod drops a `__proto__` key from a record without a word (a plain object cannot hold it safely);
 * the published schema rejects it, so validation must too: the issue if `record` has one.
 */
export function protoKeyIssue(record: unknown, path: string, what: string, subject: string): SpecIssue | undefined {
  if (typeof record !== 'object' || record === null || !Object.hasOwn(record, '__proto__')) return undefined;
  return specIssue(`${path}.__proto__`, `${what} must not be __proto__`, subject);
}

function describeIssue(issue: Issue, schema: z.ZodType): string {
  switch (issue.code) {
    case 'invalid_type': {
      if (issue.input === undefined) return 'is required';
      // z.int() reports a non-number as "expected number"; say integer, as the schema means
      const target = schemaAt(schema, issue.path);
      const expected = target instanceof z.ZodNumber && target.format === 'safeint' ? 'int' : issue.expected;
      return `must be ${EXPECTED[expected] ?? expected} (got ${describeValue(issue.input)})`;
    }
    case 'too_small':
      return describeBound(issue.origin, issue.minimum, issue.inclusive !== false, 'least');
    case 'too_big':
      return describeBound(issue.origin, issue.maximum, issue.inclusive !== false, 'most');
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_key':
      return (issue.issues[0] as Issue | undefined)?.message ?? 'invalid key';
    default:
      // formats, unions and refinements carry the message their schema was given
      return issue.message;
  }
}

const EXPECTED: Readonly<Record<string, string>> = {
  int: 'an integer', number: 'a number', string: 'a string', boolean: 'true or false',
  object: 'an object', record: 'an object', array: 'an array', tuple: 'an array',
};

function describeBound(origin: string, bound: number | bigint, inclusive: boolean, side: 'least' | 'most'): string {
  const n = Number(bound);
  if (origin === 'string') {
    if (side === 'least' && n === 1) return 'must not be empty';
    return `must be at ${side} ${n} characters long`;
  }
  if (origin === 'array') {
    if (side === 'least' && n === 1) return 'must not be empty';
    return `must have at ${side} ${n} items`;
  }
  if (!inclusive) return `must be ${side === 'least' ? 'greater' : 'less'} than ${n}`;
  return `must be at ${side} ${n}`;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value);
  return String(value);
}

// The field names an object schema at `path` declares, for "did you mean" hints.
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const target = schemaAt(schema, path);
  return target instanceof z.ZodObject ? Object.keys(target.shape) : [];
}

// The schema that checks the value at `path`, through objects, arrays and records.
function schemaAt(schema: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined {
  let current: z.ZodType | undefined = unwrap(schema);
  for (const segment of path) {
    if (current instanceof z.ZodObject) current = unwrap(current.shape[String(segment)] as z.ZodType | undefined);
    else if (current instanceof z.ZodArray) current = unwrap(current.element as z.ZodType);
    else if (current instanceof z.ZodRecord) current = unwrap(current.valueType as z.ZodType);
    else return undefined;
  }
  return current;
}

function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let current = schema;
  while (current instanceof z.ZodOptional || current instanceof z.ZodDefault || current instanceof z.ZodPrefault) {
    current = current.unwrap() as z.ZodType;
  }
  return current;
}

// The known key nearest to a typo: same letters in another case, or (for names of four letters
// or more, so that `gpu` is not taken for `cpu`) one edit away, two for long names.
function closest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = candidate.toLowerCase() === key.toLowerCase() ? 0 : editDistance(key, candidate);
    const allowed = candidate.length >= 6 ? 2 : candidate.length >= 4 ? 1 : 0;
    if (distance <= allowed && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

// Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`.
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number): number => (d[i] as number[])[j] as number;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}
