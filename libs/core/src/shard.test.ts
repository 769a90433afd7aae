import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical.ts';
import { fold } from './evolve.ts';
import type { SchedulerEvent } from './events.ts';
import { SHARD_COUNT, emptySharded, leafGet, leafIndex, shardEntriesSorted, shardGet, shardHas, shardLeaf, shardLeaves, shardOf, shardSize } from './shard.ts';
import type { Sharded } from './shard.ts';
import { initialState } from './state.ts';

/** A table built the obvious way (tests only): ids into their leaves, each leaf sorted. */
function tableOf(ids: readonly string[]): Sharded<string> {
  const table = emptySharded<string>();
  for (const id of [...new Set(ids)].sort()) {
    const n = shardOf(id);
    const level2 = (table[n >>> 8] ??= new Array(16).fill(null));
    const level3 = (level2[(n >>> 4) & 15] ??= new Array(16).fill(null));
    (level3[n & 15] ??= []).push(id);
  }
  return table;
}

const ids = fc.uniqueArray(fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/), { maxLength: 60 });

describe('sharded tables', () => {
  it('shardOf is the low 12 bits of FNV-1a over UTF-16 code units', () => {
    // FNV-1a test vectors: "" → 811c9dc5, "a" → e40c292c, "foobar" → bf9cf968
    expect(shardOf('')).toBe(0x811c9dc5 & 4095);
    expect(shardOf('a')).toBe(0xe40c292c & 4095);
    expect(shardOf('foobar')).toBe(0xbf9cf968 & 4095);
    expect(SHARD_COUNT).toBe(4096);
  });

  it('finds every id it holds, and none it does not', () => {
    fc.assert(
      fc.property(ids, ids, (held, others) => {
        const table = tableOf(held);
        for (const id of held) expect(shardGet(table, id)).toBe(id);
        for (const id of others) expect(shardHas(table, id)).toBe(held.includes(id));
        expect(shardSize(table)).toBe(new Set(held).size);
      }),
    );
  });

  it('leafIndex is a binary search: the index of an id, or -(insertion point) - 1', () => {
    const leaf = ['b', 'd', 'f'];
    expect(leafIndex(leaf, 'b')).toBe(0);
    expect(leafIndex(leaf, 'f')).toBe(2);
    expect(leafIndex(leaf, 'a')).toBe(-1);
    expect(leafIndex(leaf, 'c')).toBe(-2);
    expect(leafIndex(leaf, 'g')).toBe(-4);
    expect(leafGet(null, 'b')).toBeUndefined();
    expect(leafGet(leaf, 'd')).toBe('d');
  });

  it('lists entries in UTF-16 code unit order and leaves in shard order', () => {
    fc.assert(
      fc.property(ids, (held) => {
        const table = tableOf(held);
        expect(shardEntriesSorted(table).map(([id]) => id)).toEqual([...new Set(held)].sort());
        const leaves = shardLeaves(table);
        expect(leaves.map(([n]) => n)).toEqual([...new Set(held.map(shardOf))].sort((a, b) => a - b));
        for (const [n, leaf] of leaves) expect(shardLeaf(table, n)).toBe(leaf);
      }),
    );
  });

  it('serialises by content, not history: a queue that empties is the empty table again', () => {
    const submit = (id: string, inputSeq: number): SchedulerEvent => ({
      type: 'JobSubmitted', v: 1, inputSeq, fingerprint: 'f',
      job: { id, identity: { user: 'u', queue: 'q', project: 'p' }, priority: 0, roles: [{ name: 'task', count: 1, resources: { cpu: 1, memoryMb: 1, gpus: 0, gpuMemoryMb: 0 } }], placement: { policy: 'pack', gpuLocality: false }, select: '', minInstances: 0 },
    });
    const jobIds = Array.from({ length: 40 }, (_, i) => `job-${i}`);
    const queued = fold(initialState(), jobIds.map((id, i) => submit(id, i + 1)));
    expect(shardSize(queued.pending)).toBe(40);
    const drained = fold(queued, jobIds.map((jobId): SchedulerEvent => ({ type: 'JobFinished', jobId, at: 1, outcome: 'succeeded' })));
    expect(canonicalJson(drained.pending)).toBe(canonicalJson(emptySharded()));
    expect(canonicalJson(emptySharded())).toBe('[null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null]');
  });
});
