import { validatePolicySpec } from '../contract/validatePolicySpec.ts';
import type { PolicySpec, QueueSpec } from '../contract/types.ts';

/**
 * Failures a workload plays for one job (contract v1.2, DESIGN.md §15): in each of its first
 * `attempts` attempts, member `member` exits `exitCode` `afterMs` after the gang's commit (if the
 * gang still runs then), and the job's failure policy decides what follows.
 */
export interface WorkloadFailure {
  attempts: number;
  afterMs: number;
  member: number;
  exitCode: number;
}

/** One arrival of a workload: a JobSpec submitted at `at`, each of whose members runs `runMs` from its gang's commit (unless `fail` fails an attempt first). */
export interface WorkloadEntry {
  at: number;
  submit: unknown;
  runMs: number;
  fail?: WorkloadFailure;
}

/**
 * A workload scenario (DESIGN.md §11, "What-if on a workload"): nodes present from time 0, a
 * policy and queues (§12), arrivals in time order, and the time to stop at (absent: when nothing is left to happen).
 */
export interface WorkloadScenario {
  nodes: unknown[];
  policy?: PolicySpec;
  /** QueueSpecs set before the first instant, in order (parents first). */
  queues?: QueueSpec[];
  workload: WorkloadEntry[];
  until?: number;
}

const ENTRY_KEYS = ['at', 'submit', 'runMs', 'fail'];

const FAIL_KEYS = ['attempts', 'afterMs', 'member', 'exitCode'];

/** Whether `v` is an integer from 0 to 2^53 − 1 (a time or a duration in ms). */
function isTime(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/** Quotes a value for an error message, briefly. */
function shown(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/**
 * Checks a workload scenario's fields (the top-level record of a scenario holding `workload`),
 * or says which one is wrong, by path: `workload.3.runMs: ...`. Submitted JobSpecs are left to
 * the core's ingest, which answers an invalid one with a JobRejected line, as the service does.
 */
export function parseWorkloadScenario(record: Record<string, unknown>, nodes: unknown[], queues?: QueueSpec[]): { ok: true; scenario: WorkloadScenario } | { ok: false; error: string } {
  const fail = (error: string) => ({ ok: false as const, error });
  if (!Array.isArray(record.workload)) return fail(`workload: must be an array of arrivals {at, submit, runMs}, got ${shown(record.workload)}`);
  let until: number | undefined;
  if (record.until !== undefined) {
    if (!isTime(record.until)) return fail(`until: must be an integer ≥ 0 (ms from the start), got ${shown(record.until)}`);
    until = record.until;
  }
  let policy: PolicySpec | undefined;
  if (record.policy !== undefined) {
    const valid = validatePolicySpec(record.policy);
    if (!valid.ok) return fail(valid.error.path === '' ? valid.error.message : `policy.${valid.error.message}`);
    policy = valid.value;
  }
  const workload: WorkloadEntry[] = [];
  let previous = 0;
  for (const [i, entry] of record.workload.entries()) {
    const where = `workload.${i}`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return fail(`${where}: must be an object {at, submit, runMs}, got ${shown(entry)}`);
    const e = entry as Record<string, unknown>;
    const unknown = Object.keys(e).find((k) => !ENTRY_KEYS.includes(k));
    if (unknown !== undefined) return fail(`${where}.${unknown}: unknown field (an arrival has at, submit, runMs and fail)`);
    if (!('at' in e)) return fail(`${where}.at: required (the arrival time, ms from the start)`);
    if (!isTime(e.at)) return fail(`${where}.at: must be an integer ≥ 0 (ms from the start), got ${shown(e.at)}`);
    if (e.at < previous) return fail(`${where}.at: ${e.at} is before the arrival above it (${previous}); list arrivals in time order`);
    if (until !== undefined && e.at > until) return fail(`${where}.at: ${e.at} is after until (${until})`);
    previous = e.at;
    if (!('submit' in e)) return fail(`${where}.submit: required (the JobSpec submitted)`);
    let runMs: number;
    if (e.runMs !== undefined) {
      if (!isTime(e.runMs)) return fail(`${where}.runMs: must be an integer ≥ 0 (how long each member runs, in ms), got ${shown(e.runMs)}`);
      runMs = e.runMs;
    } else {
      const hint = typeof e.submit === 'object' && e.submit !== null ? (e.submit as { runtimeMs?: unknown }).runtimeMs : undefined;
      if (!isTime(hint)) return fail(`${where}.runMs: required (the job gives no runtimeMs hint to take it from)`);
      runMs = hint;
    }
    const failure = e.fail === undefined ? undefined : parseFailure(e.fail, `${where}.fail`);
    if (typeof failure === 'string') return fail(failure);
    workload.push({ at: e.at, submit: e.submit, runMs, ...(failure === undefined ? {} : { fail: failure }) });
  }
  return {
    ok: true,
    scenario: {
      nodes,
      workload,
      ...(policy === undefined ? {} : { policy }),
      ...(queues === undefined ? {} : { queues }),
      ...(until === undefined ? {} : { until }),
    },
  };
}

/** An arrival's `fail` (the failures to play), or the error naming its field. */
function parseFailure(value: unknown, where: string): WorkloadFailure | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `${where}: must be an object {attempts, afterMs, member?, exitCode?}, got ${shown(value)}`;
  const f = value as Record<string, unknown>;
  const unknown = Object.keys(f).find((k) => !FAIL_KEYS.includes(k));
  if (unknown !== undefined) return `${where}.${unknown}: unknown field (a failure has attempts, afterMs, member and exitCode)`;
  if (!isTime(f.attempts) || f.attempts < 1) return `${where}.attempts: must be an integer ≥ 1 (how many attempts fail), got ${shown(f.attempts)}`;
  if (!isTime(f.afterMs)) return `${where}.afterMs: must be an integer ≥ 0 (ms from the attempt's commit), got ${shown(f.afterMs)}`;
  if (f.member !== undefined && !isTime(f.member)) return `${where}.member: must be an integer ≥ 0, got ${shown(f.member)}`;
  if (f.exitCode !== undefined && !Number.isSafeInteger(f.exitCode)) return `${where}.exitCode: must be an integer, got ${shown(f.exitCode)}`;
  return { attempts: f.attempts, afterMs: f.afterMs, member: (f.member as number | undefined) ?? 0, exitCode: (f.exitCode as number | undefined) ?? 1 };
}
