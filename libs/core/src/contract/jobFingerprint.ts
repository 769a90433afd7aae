import { canonicalHashWith } from '../canonical.ts';
import type { CanonicalHasher } from '../canonical.ts';
import { parseSelect } from '../select/parseSelect.ts';
import { printSelect } from '../select/printSelect.ts';
import type { Identity, JobRequest, JobSpec } from './types.ts';

/**
 * A stable 16-hex-digit fingerprint of what a job asks of the cluster: each role's count and
 * resources (in role order; an elastic role's minCount too), the placement (its topology included when given: absent, it adds
 * nothing, so a job without one fingerprints as before), and the select in canonical form. Id, identity,
 * priority, timeouts, commands and env do not contribute; role names neither. A job with
 * alternatives (DESIGN.md §13) fingerprints the list of its variants' fingerprints, in order; each
 * variant's own (`alternativeFingerprints`) is what the unsatisfiable cache keys. A hasher (the
 * turn's context) makes it cheaper, never different.
 */
export function jobFingerprint(spec: JobSpec, hasher?: CanonicalHasher): string {
  if (spec.alternatives === undefined) return requestFingerprint(spec, hasher);
  return canonicalHashWith({ v: 1, alternatives: alternativeFingerprints(spec, hasher) }, hasher).slice(0, 16);
}

/**
 * The fingerprint of each variant of a job with alternatives, in order (empty for a job without):
 * each is the fingerprint a job asking for that request alone would have, so identical requests
 * share an unsatisfiable-cache entry however they were submitted.
 */
export function alternativeFingerprints(spec: JobSpec, hasher?: CanonicalHasher): string[] {
  return spec.alternatives === undefined ? [] : spec.alternatives.map((request) => requestFingerprint(request, hasher));
}

function requestFingerprint(request: JobRequest, hasher?: CanonicalHasher): string {
  const select = parseSelect(request.select);
  return canonicalHashWith({
    v: 1,
    roles: request.roles.map((role) => (role.minCount === undefined ? { count: role.count, resources: role.resources } : { count: role.count, minCount: role.minCount, resources: role.resources })),
    placement: request.placement,
    // a validated spec always parses; raw text keeps a spec that skipped validation distinct
    select: select.ok ? printSelect(select.ast) : { raw: request.select },
  }, hasher).slice(0, 16);
}

/** The unsatisfiable-cache key of a fingerprint and an identity (a JSON array: unambiguous). */
export function unsatisfiableKey(fingerprint: string, identity: Identity): string {
  return JSON.stringify([fingerprint, identity.user, identity.queue, identity.project]);
}
