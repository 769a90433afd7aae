import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IN_PLACE, copyOnWrite } from './copyOnWrite.ts';
import type { Writer } from './copyOnWrite.ts';
import { SHARD_COUNT, emptySharded, shardLeaf } from './shard.ts';
import type { ShardLevel, Sharded } from './shard.ts';
import { PartMemo, diffShards, foldParts } from './shardDiff.ts';
import type { PartFold, ShardPart } from './shardDiff.ts';

type Table = Sharded<string>;

/** One edit: put `id` into shard `shard`, or take it out (and clear the slots it leaves empty). */
interface Edit {
  shard: number;
  id: string;
  put: boolean;
}

// shards drawn from a few level prefixes as well as anywhere, so that edits share levels and leaves
const shard = fc.oneof(fc.integer({ min: 0, max: SHARD_COUNT - 1 }), fc.constantFrom(0, 1, 17, 255, 256, 4095));
const edit = fc.record({ shard, id: fc.constantFrom('a', 'b', 'c', 'd'), put: fc.boolean() });
const batches = fc.array(fc.array(edit, { maxLength: 6 }), { minLength: 1, maxLength: 8 });

/** Applies edits the way the fold does: copy the path to each leaf written, share the rest. */
function applyEdits(table: Table, edits: readonly Edit[], w: Writer): void {
  for (const { shard: s, id, put } of edits) {
    const at = [s >>> 8, (s >>> 4) & 15, s & 15] as const;
    if (put) {
      const l2 = (table[at[0]] === null ? (table[at[0]] = w.created(new Array<null>(16).fill(null))) : w.writable(table, at[0])) as ShardLevel<ShardLevel<string[]>>;
      const l3 = (l2[at[1]] === null ? (l2[at[1]] = w.created(new Array<null>(16).fill(null))) : w.writable(l2, at[1])) as ShardLevel<string[]>;
      const leaf = l3[at[2]] === null ? (l3[at[2]] = w.created([])) : w.writable(l3, at[2])!;
      if (!leaf.includes(id)) {
        leaf.push(id);
        leaf.sort();
      }
    } else {
      const leaf = shardLeaf(table, s);
      if (leaf === null || leaf === undefined || !leaf.includes(id)) continue;
      const l2 = w.writable(table, at[0])!;
      const l3 = w.writable(l2, at[1])!;
      const writable = w.writable(l3, at[2])!;
      writable.splice(writable.indexOf(id), 1);
      if (writable.length > 0) continue;
      l3[at[2]] = null;
      if (l3.every((c) => c === null)) l2[at[1]] = null;
      if (l2.every((c) => c === null)) table[at[0]] = null;
    }
  }
}

/** The tables after each batch, each a frozen copy-on-write successor of the one before. */
function history(edits: readonly (readonly Edit[])[]): Table[] {
  const out: Table[] = [emptySharded<string>()];
  for (const batch of edits) out.push(copyOnWrite(out[out.length - 1]!, (t, w) => applyEdits(t, batch, w)));
  return out;
}

/** What diffShards visits: the shards, and whether it said everything walked was frozen. */
function visited(from: ShardPart, to: Table): { shards: number[]; frozen: boolean } {
  const shards: number[] = [];
  const frozen = diffShards(from, to, (s, was, now) => {
    expect(was).toBe(from === null ? undefined : shardLeaf(from as Table, s));
    expect(now).toBe(shardLeaf(to, s));
    shards.push(s);
  });
  return { shards, frozen };
}

/** The shards whose leaf is not the same object in both tables (absent counts as one), in order. */
function differing(from: Table | null, to: Table): number[] {
  const out: number[] = [];
  for (let s = 0; s < SHARD_COUNT; s++) if ((from === null ? null : shardLeaf(from, s) ?? null) !== (shardLeaf(to, s) ?? null)) out.push(s);
  return out;
}

/** A fold counting the ids under a part, and the leaves it read. */
function counting(): { fold: PartFold<{ n: number }>; reads: number[] } {
  const reads: number[] = [];
  return {
    reads,
    fold: {
      leaf: (ids, _beside, s) => {
        reads.push(s);
        return { n: ids.length };
      },
      empty: () => ({ n: 0 }),
      add: (level, part) => {
        level.n += part.n;
      },
    },
  };
}

const size = (t: Table): number => differing(emptySharded<string>(), t).reduce((n, s) => n + shardLeaf(t, s)!.length, 0);

describe('diffShards', () => {
  it('visits exactly the leaves that differ, in shard order, for any sequence of copy-on-write edits', () => {
    fc.assert(
      fc.property(batches, (edits) => {
        const tables = history(edits);
        for (let i = 1; i < tables.length; i++) {
          for (const from of [tables[i - 1]!, tables[0]!, null]) {
            const { shards, frozen } = visited(from, tables[i]!);
            expect(shards).toEqual(differing(from, tables[i]!));
            expect(frozen).toBe(true);
          }
        }
      }),
    );
  });

  it('skips a table that is the very same object, and says a draft is not frozen', () => {
    const [, base] = history([[{ shard: 300, id: 'a', put: true }]]);
    expect(visited(base!, base!).shards).toEqual([]);
    copyOnWrite(base!, (draft, w) => {
      applyEdits(draft, [{ shard: 301, id: 'b', put: true }], w);
      expect(visited(base!, draft)).toEqual({ shards: [301], frozen: false });
    });
    // a draft that only shares frozen parts with its base has nothing unfrozen to walk
    copyOnWrite(base!, (draft) => expect(visited(base!, draft)).toEqual({ shards: [], frozen: false }));
  });
});

describe('foldParts', () => {
  it('folds every leaf once, then rereads only the leaves an edit wrote', () => {
    fc.assert(
      fc.property(batches, (edits) => {
        const tables = history(edits);
        const memo = new PartMemo<{ n: number }>();
        for (let i = 1; i < tables.length; i++) {
          const { fold, reads } = counting();
          expect(foldParts(memo, tables[i]!, null, fold).n).toBe(size(tables[i]!));
          // each leaf read is one the last table did not hold (the memo keeps every frozen part)
          const fresh = new Set(differing(tables[i - 1]!, tables[i]!));
          for (const s of reads) expect(fresh.has(s)).toBe(true);
        }
      }),
    );
  });

  it('reads a part again beside another part, and never remembers a draft part', () => {
    const [, base] = history([[{ shard: 5, id: 'a', put: true }, { shard: 6, id: 'b', put: true }]]);
    const other = history([[{ shard: 5, id: 'x', put: true }]])[1]!;
    const memo = new PartMemo<{ n: number }>();
    const first = counting();
    expect(foldParts(memo, base!, null, first.fold).n).toBe(2);
    expect(first.reads).toEqual([5, 6]);
    const same = counting();
    foldParts(memo, base!, null, same.fold);
    expect(same.reads).toEqual([]);
    const beside = counting();
    foldParts(memo, base!, other, beside.fold);
    expect(beside.reads).toEqual([5, 6]);
    // a draft's parts change in place: after a write the same objects hold more
    copyOnWrite(base!, (draft, w) => {
      applyEdits(draft, [{ shard: 7, id: 'c', put: true }], w);
      expect(foldParts(memo, draft, null, counting().fold).n).toBe(3);
      draft[0]![0]![7]!.push('d');
      const again = counting();
      expect(foldParts(memo, draft, null, again.fold).n).toBe(4);
      // the frozen leaves under the draft's copied levels are still served from the memo
      expect(again.reads).toEqual([7]);
    });
  });

  it('never remembers a frozen level above a part that is not (a copy-on-write run over a mutable table)', () => {
    const mutable = emptySharded<string>();
    applyEdits(mutable, [{ shard: 0, id: 'a', put: true }, { shard: 1, id: 'b', put: true }], IN_PLACE);
    const next = copyOnWrite(mutable, (t, w) => applyEdits(t, [{ shard: 0, id: 'c', put: true }], w));
    expect(Object.isFrozen(next[0]![0])).toBe(true);
    expect(Object.isFrozen(next[0]![0]![1])).toBe(false);
    const memo = new PartMemo<{ n: number }>();
    expect(foldParts(memo, next, null, counting().fold).n).toBe(3);
    next[0]![0]![1]!.push('d');
    expect(foldParts(memo, next, null, counting().fold).n).toBe(4);
  });
});
