import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical.ts';
import { IN_PLACE, copyOnWrite, emptyRecord } from './copyOnWrite.ts';

interface Doc {
  a: { n: number; list: number[] };
  b: { n: number };
}

function doc(): Doc {
  return { a: { n: 1, list: [1, 2] }, b: { n: 2 } };
}

describe('copyOnWrite', () => {
  it('copies what it writes once per run, shares the rest, and leaves the base as it was', () => {
    const base = doc();
    const before = canonicalJson(base);
    let copies: object[] = [];
    const next = copyOnWrite(base, (root, w) => {
      const a = w.writable(root, 'a');
      a.n = 10;
      expect(w.writable(root, 'a')).toBe(a);
      w.writable(a, 'list').push(3);
      copies = [a, a.list];
    });
    expect(canonicalJson(base)).toBe(before);
    expect(next).toEqual({ a: { n: 10, list: [1, 2, 3] }, b: { n: 2 } });
    expect(next.b).toBe(base.b);
    expect(next.a).not.toBe(base.a);
    expect(copies).toEqual([next.a, next.a.list]);
  });

  it('does not copy what the recipe made, and freezes what it copied or made, not the base', () => {
    const base = doc();
    const next = copyOnWrite(base, (root, w) => {
      root.b = w.created({ n: 5 });
      expect(w.writable(root, 'b')).toBe(root.b);
      w.writable(root, 'b').n = 6;
    });
    expect(next.b).toEqual({ n: 6 });
    expect(Object.isFrozen(next)).toBe(true);
    expect(Object.isFrozen(next.b)).toBe(true);
    expect(Object.isFrozen(base)).toBe(false);
    expect(Object.isFrozen(next.a)).toBe(false);
  });

  it('freezes nothing with freeze: false (a scratch copy the caller drops)', () => {
    const next = copyOnWrite(doc(), (root, w) => {
      w.writable(root, 'a').n = 2;
    }, { freeze: false });
    expect(Object.isFrozen(next)).toBe(false);
    expect(Object.isFrozen(next.a)).toBe(false);
  });

  it('copies a record into a prototype-less record, which serialises like {} and inherits nothing', () => {
    const base = { counts: { constructor: 1 } as Record<string, number> };
    const next = copyOnWrite(base, (root, w) => {
      w.writableRecord(root, 'counts')['toString'] = 2;
    });
    expect(Object.getPrototypeOf(next.counts)).toBe(null);
    expect(canonicalJson(next.counts)).toBe('{"constructor":1,"toString":2}');
    expect(emptyRecord<number>()['constructor']).toBeUndefined();
    expect(canonicalJson(base)).toBe('{"counts":{"constructor":1}}');
  });

  it('IN_PLACE hands out the objects themselves: everything is writable', () => {
    const base = doc();
    expect(IN_PLACE.writable(base, 'a')).toBe(base.a);
    expect(IN_PLACE.isWritable(base.a)).toBe(true);
  });

  it('runs are independent: one nested in another keeps its own copies, and the outer goes on', () => {
    const base = doc();
    const outer = copyOnWrite(base, (root, w) => {
      w.writable(root, 'a').n = 3;
      const inner = copyOnWrite(root, (r, v) => {
        expect(v.isWritable(r.a)).toBe(false);
        v.writable(r, 'a').n = 4;
      });
      expect(inner.a.n).toBe(4);
      expect(w.isWritable(root.a)).toBe(true);
      w.writable(root, 'a').n = 5;
    });
    expect(outer.a.n).toBe(5);
    expect(base.a.n).toBe(1);
  });

  it('a run writing into a frozen base by mistake throws instead of changing it', () => {
    const base = Object.freeze({ a: Object.freeze({ n: 1, list: Object.freeze([1]) }), b: Object.freeze({ n: 2 }) }) as Doc;
    expect(() =>
      copyOnWrite(base, (root) => {
        root.a.n = 3;
      }),
    ).toThrow(TypeError);
    expect(base.a.n).toBe(1);
  });
});
