import { foldTransactions, initialState, shardEntriesSorted, shardGet, stateHash } from '@muster/core';
import type { LoggedTransaction, NodeState, SchedulerEvent, State } from '@muster/core';

/** The drill's own replay of the log: hashes where asked, overcommit after every transaction, the final state. */
export interface ReplayResult {
  /** The replayed state's hash at each asked sequence that the log reaches. */
  hashes: Map<number, string>;
  /** Every node found over its capacity (or with a GPU serving two members) after a transaction. */
  overcommits: string[];
  final: State;
}

/** Replays the log one transaction at a time with the core, checking the nodes each transaction touched. */
export function replayLog(log: readonly LoggedTransaction[], hashAt: ReadonlySet<number>): ReplayResult {
  let state = initialState();
  const hashes = new Map<number, string>();
  const overcommits: string[] = [];
  for (const logged of log) {
    state = foldTransactions(state, [logged]);
    for (const nodeId of touchedNodes(logged.tx.events)) {
      const node = shardGet(state.nodes, nodeId);
      const problem = node === undefined ? null : overcommit(node);
      if (problem !== null) overcommits.push(`log ${logged.seq}: ${nodeId} ${problem}`);
    }
    if (hashAt.has(logged.seq)) hashes.set(logged.seq, stateHash(state));
  }
  return { hashes, overcommits, final: state };
}

/** Nodes whose use is not zero although no job is pending or running (exact release, DESIGN.md §7.5). */
export function unreleased(state: State): string[] {
  if (shardEntriesSorted(state.jobs).some(([, job]) => job.status === 'pending' || job.status === 'running')) return [];
  return shardEntriesSorted(state.nodes)
    .filter(([, node]) => {
      const u = node.used;
      return u.cpu !== 0 || u.memoryMb !== 0 || u.slots !== 0 || u.gpus !== 0 || node.gpusUsed.length !== 0;
    })
    .map(([id]) => id);
}

function touchedNodes(events: readonly SchedulerEvent[]): Set<string> {
  const ids = new Set<string>();
  for (const e of events) {
    if ('node' in e && typeof e.node === 'string') ids.add(e.node);
    if (e.type === 'GangCommitted') for (const a of e.allocations) ids.add(a.node);
  }
  return ids;
}

function overcommit(node: NodeState): string | null {
  const cap = node.spec.capacity;
  const u = node.used;
  if (u.cpu > cap.cpu) return `cpu ${u.cpu} > ${cap.cpu}`;
  if (u.memoryMb > cap.memoryMb) return `memoryMb ${u.memoryMb} > ${cap.memoryMb}`;
  if (cap.slots !== undefined && u.slots > cap.slots) return `slots ${u.slots} > ${cap.slots}`;
  if (u.gpus > node.spec.gpus.length) return `gpus ${u.gpus} > ${node.spec.gpus.length}`;
  if (new Set(node.gpusUsed).size !== node.gpusUsed.length) return `a GPU serves two members (${node.gpusUsed.join(',')})`;
  return null;
}
