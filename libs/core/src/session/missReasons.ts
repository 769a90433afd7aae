import type { AbortCategory, AbortReason } from '../events.ts';
import type { GangShape } from '../placement/gangShape.ts';
import type { HostClass } from '../placement/hostClass.ts';
import { topologyRoom } from '../placement/topologyDomains.ts';
import type { QuotaIssue } from './queueLedger.ts';
import type { AttemptScope } from './sessionScope.ts';
import type { Variant } from './sessionVariants.ts';

/** Why a variant tried on the hosts missed, in words and host counts by the reason each host could not take its heaviest member. */
export function reasonFor(scope: AttemptScope, variant: Variant, shape: GangShape, classes: readonly HostClass[], category: AbortCategory): AbortReason {
  const heaviest = shape.roles[0]!;
  const counts = scope.counter.count(classes, heaviest.resources, shape.placement.gpuLocality);
  const gang = `${shape.size} member${shape.size === 1 ? '' : 's'} (${describePlacement(shape)})`;
  const message = category === 'no-matching-hosts'
    ? `no up, undrained host matches select ${JSON.stringify(variant.request.select)} (${counts.total} hosts known)`
    : category === 'placement-unsatisfiable'
      ? `no plan places the ${gang} even on the cluster as it is now with every host empty`
      : `not enough free resources for the ${gang} now; ${counts.fit} of ${counts.eligible} matching hosts could take one '${heaviest.name}' member`;
  // a required topology (DESIGN.md §13) names its domains and the room in each (null otherwise)
  const room = category === 'no-matching-hosts' ? null : topologyRoom(scope.index, classes, shape, scope.counter);
  return { category, message: room === null ? message : `${message}; all in one ${room.key}: ${room.message}`, hosts: counts.hosts };
}

/** Why a placement failed for want of a rendezvous port on member 0's host (DESIGN.md §15). */
export function portReason(node: string): AbortReason {
  return { category: 'insufficient-resources', message: `no free rendezvous port on ${node}: every port of its range is held by a running gang`, hosts: { 'no-rendezvous-port': 1 } };
}

/** Why a variant is refused by its queue's max. */
export function quotaReason(q: QuotaIssue): AbortReason {
  return {
    category: 'quota',
    message: `queue ${q.queue}: ${q.resource} in use ${q.used} plus this gang's ${q.request} would pass its max of ${q.max}`,
    hosts: {},
  };
}

function describePlacement(shape: GangShape): string {
  const p = shape.placement;
  const parts: string[] = [p.policy];
  if (p.ptile !== undefined) parts.push(`ptile ${p.ptile}`);
  if (p.gpuLocality) parts.push('gpuLocality');
  if (p.topology !== undefined) parts.push(`topology ${p.topology.key} ${p.topology.mode}`);
  return parts.join(', ');
}
