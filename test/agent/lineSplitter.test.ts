// How member output becomes lines: split at newlines (a \r before one dropped), a character split
// across chunks kept whole, an endless line cut, and the last line without a newline given at the end.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { LineSplitter } from '@muster/agent/testing';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('LineSplitter', () => {
  it('splits at \\n and \\r\\n, keeps a UTF-8 character split across chunks, and gives the rest at the end', () => {
    const split = new LineSplitter(100);
    const euro = bytes('€');
    expect(split.push(bytes('a\r\nb\nc'))).toEqual(['a', 'b']);
    expect(split.push(euro.slice(0, 1))).toEqual([]);
    expect(split.push(new Uint8Array([...euro.slice(1), ...bytes('\nrest')]))).toEqual(['c€']);
    expect(split.end()).toEqual(['rest']);
    expect(split.end()).toEqual([]);
  });

  it('cuts a line longer than the limit', () => {
    const split = new LineSplitter(4);
    expect(split.push(bytes('abcdefghij'))).toEqual(['abcd', 'efgh']);
    expect(split.end()).toEqual(['ij']);
  });

  it('however the bytes are chunked, the lines are those of the whole text', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'é', '€', '\n', '\r\n', ' '), { maxLength: 60 }), fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 20 }), (parts, cuts) => {
        const text = parts.join('');
        const all = bytes(text);
        const split = new LineSplitter(1_000);
        const got: string[] = [];
        let at = 0;
        for (let i = 0; at < all.length; i++) {
          const size = cuts[i % cuts.length] as number;
          got.push(...split.push(all.slice(at, at + size)));
          at += size;
        }
        got.push(...split.end());
        const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
        if (lines[lines.length - 1] === '') lines.pop();
        expect(got).toEqual(lines);
      }),
    );
  });
});
