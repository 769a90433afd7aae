import type { JobRequest, JobSpec } from './contract/types.ts';
import { parseSelect } from './select/parseSelect.ts';
import type { SelectAst } from './select/index.ts';
import type { JobState } from './state.ts';

// What a job asks of the cluster, read in one place (DESIGN.md §13): a job without alternatives
// is its own one request; a job with alternatives has one per variant and, while a gang runs,
// the one it committed. Nothing else reads `spec.roles`, `spec.placement` or `spec.select`.

/** The request of a pending job with alternatives, which has none in force: no roles, so no resources. */
const NO_REQUEST: JobRequest = Object.freeze({ roles: [], placement: { policy: 'pack', gpuLocality: false }, select: '' }) as JobRequest;

/**
 * Every request a job may be placed with, in the order an attempt tries them: the spec itself, or
 * its alternatives (with a `memo` of the immutable specs, as a `SpecMemo` keeps it, a spec's list
 * of one is made once).
 */
export function jobRequests(spec: JobSpec, memo: WeakMap<JobSpec, readonly JobRequest[]> | null = null): readonly JobRequest[] {
  if (spec.alternatives !== undefined) return spec.alternatives;
  let one = memo?.get(spec);
  if (one === undefined) {
    one = [spec];
    memo?.set(spec, one);
  }
  return one;
}

/**
 * The request in force for a job: the spec itself for a job without alternatives; for one with
 * them, the variant its running gang committed (none while pending: no roles).
 */
export function activeRequest(job: Pick<JobState, 'spec' | 'alternative'>): JobRequest {
  const spec = job.spec;
  if (spec.alternatives === undefined) return spec;
  return job.alternative === undefined ? NO_REQUEST : spec.alternatives[job.alternative] ?? NO_REQUEST;
}

/** The request of variant `alternative` of a job (the spec itself, index 0, for a job without alternatives); undefined when it has none such. */
export function requestOf(spec: JobSpec, alternative: number | undefined): JobRequest | undefined {
  if (spec.alternatives === undefined) return alternative === undefined || alternative === 0 ? spec : undefined;
  return alternative === undefined ? undefined : spec.alternatives[alternative];
}

/** The members of a request's gang (all its roles' counts). */
export function requestSize(request: JobRequest): number {
  let size = 0;
  for (const role of request.roles) size += role.count;
  return size;
}

/** Whether a request has an elastic role (DESIGN.md §13: a `minCount` below its count). */
export function isElastic(request: JobRequest): boolean {
  return request.roles.some((r) => r.minCount !== undefined);
}

/** How many members a job holds now (bound, not given up): a running elastic gang's current size. */
export function heldMembers(job: Pick<JobState, 'members'>): number {
  let n = 0;
  for (const m of job.members) if (m !== null) n++;
  return n;
}

/** The unsatisfiable-cache fingerprint of variant `i` of a job (its own fingerprint for a job without alternatives). */
export function requestFingerprint(job: Pick<JobState, 'fingerprint' | 'fingerprints'>, i: number): string {
  return job.fingerprints?.[i] ?? job.fingerprint;
}

/**
 * The compiled select of variant `i` of a job (null: every host): compiled at ingest for a job
 * without alternatives; for one with them, compiled here (once per variant with a `memo` of the
 * immutable requests, as a `SpecMemo` keeps it).
 */
export function requestSelectAst(job: Pick<JobState, 'spec' | 'selectAst'>, i: number, memo: WeakMap<JobRequest, SelectAst | null> | null = null): SelectAst | null {
  const spec = job.spec;
  if (spec.alternatives === undefined) return job.selectAst;
  const request = spec.alternatives[i];
  if (request === undefined) return null;
  let ast = memo?.get(request);
  if (ast === undefined) {
    const parsed = request.select.trim() === '' ? null : parseSelect(request.select);
    ast = parsed !== null && parsed.ok ? parsed.ast : null;
    memo?.set(request, ast);
  }
  return ast;
}
