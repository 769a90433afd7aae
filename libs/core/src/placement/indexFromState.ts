import { shardEntriesSorted } from '../shard.ts';
import type { State } from '../state.ts';
import type { OfflineHosts } from './hostCounts.ts';
import type { HostSource } from './hostIndex.ts';
import { HostIndex } from './hostIndex.ts';

/** The host index of a state's up nodes (in node id order), and how many nodes are lost or drained. */
export function indexFromState(state: State): { index: HostIndex; offline: OfflineHosts } {
  const sources: HostSource[] = [];
  const offline: OfflineHosts = { lost: 0, drained: 0 };
  for (const [, node] of shardEntriesSorted(state.nodes)) {
    if (node.status === 'lost') offline.lost++;
    else if (node.status === 'drained') offline.drained++;
    else sources.push({ spec: node.spec, usedCpu: node.used.cpu, usedMemoryMb: node.used.memoryMb, usedSlots: node.used.slots, gpusUsed: node.gpusUsed });
  }
  return { index: new HostIndex(sources), offline };
}
