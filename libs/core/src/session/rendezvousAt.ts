import { DEFAULT_RENDEZVOUS_PORTS } from '../contract/specLimits.ts';
import type { Rendezvous } from '../events.ts';
import type { NodeState } from '../state.ts';

const NONE: ReadonlySet<number> = new Set();

/**
 * The rendezvous a gang whose member 0 is on `node` gets now (DESIGN.md §15): the node's address
 * (its id, as a host name, when it registered without one) and the lowest port of its range that
 * no running gang holds there (a port in `freed` counts as free: its gang is stopped in the same
 * transaction); null when the range is exhausted.
 */
export function rendezvousAt(node: NodeState, freed: ReadonlySet<number> = NONE): Rendezvous | null {
  const range = node.spec.ports ?? DEFAULT_RENDEZVOUS_PORTS;
  let port = range.from;
  // held ports are ascending: walk them until the first gap at or above the range's start
  for (const held of node.rendezvousPorts ?? []) {
    if (held < port || freed.has(held)) continue;
    if (held > port) break;
    port++;
  }
  return port > range.to ? null : { node: node.spec.id, address: node.spec.address ?? node.spec.id, port };
}
