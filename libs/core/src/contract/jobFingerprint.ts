import { canonicalHashWith } from '../canonical.ts';
import type { CanonicalHasher } from '../canonical.ts';
import { parseSelect } from '../select/parseSelect.ts';
import { printSelect } from '../select/printSelect.ts';
import type { Identity, JobSpec } from './types.ts';

/**
 * A stable 16-hex-digit fingerprint of what a job asks of the cluster: each role's count and
 * resources (in role order), the placement (its topology included when given: absent, it adds
 * nothing, so a job without one fingerprints as before), and the select in canonical form. Id, identity,
 * priority, timeouts, commands and env do not contribute; role names neither. A hasher (the
 * turn's context) makes it cheaper, never different.
 */
export function jobFingerprint(spec: JobSpec, hasher?: CanonicalHasher): string {
  const select = parseSelect(spec.select);
  return canonicalHashWith({
    v: 1,
    roles: spec.roles.map((role) => ({ count: role.count, resources: role.resources })),
    placement: spec.placement,
    // a validated spec always parses; raw text keeps a spec that skipped validation distinct
    select: select.ok ? printSelect(select.ast) : { raw: spec.select },
  }, hasher).slice(0, 16);
}

/** The unsatisfiable-cache key of a fingerprint and an identity (a JSON array: unambiguous). */
export function unsatisfiableKey(fingerprint: string, identity: Identity): string {
  return JSON.stringify([fingerprint, identity.user, identity.queue, identity.project]);
}
