import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evalSelect } from './evalSelect.ts';
import type { SelectHost } from './evalSelect.ts';
import { parseSelect } from './parseSelect.ts';
import { printSelect } from './printSelect.ts';
import type { SelectAst } from './selectAst.ts';
import { selectLabels } from './selectLabels.ts';

const a100: SelectHost = {
  labels: { zone: 'a', gpu_model: 'A100', rack: 7, cores: '16', version: '10', zip: '01234', 'topo.row-1': 'x', cpu: 'label-cpu' },
  capacity: { cpu: 8000, memoryMb: 65536, slots: 8 },
  gpus: 4,
};
const bare: SelectHost = { labels: {}, capacity: { cpu: 1000, memoryMb: 1024 }, gpus: 0 };

function astOf(src: string): SelectAst {
  const parsed = parseSelect(src);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.ast;
}

function matches(src: string, host: SelectHost): boolean {
  return evalSelect(astOf(src), host);
}

describe('evalSelect', () => {
  it.each<[string, SelectHost, boolean]>([
    // empty matches everything
    ['', a100, true],
    ['  ', bare, true],
    // the DESIGN.md example
    ["zone == 'a' && gpu_model in ('A100','H100')", a100, true],
    ["zone == 'a' && gpu_model in ('A100','H100')", bare, false],
    // missing labels: every comparison false except !=, and `in` false
    ["zone == 'a'", bare, false],
    ["zone != 'a'", bare, true],
    ['rack < 5', bare, false],
    ['rack <= 5', bare, false],
    ['rack > 5', bare, false],
    ['rack >= 5', bare, false],
    ["zone in ('a', 'b')", bare, false],
    ["!(zone in ('a', 'b'))", bare, true],
    ["!(zone == 'a')", bare, true],
    // numbers compare as numbers when both sides are numbers
    ['rack == 7', a100, true],
    ['rack > 6.5', a100, true],
    ['rack < -1', a100, false],
    ['cores >= 8', a100, true], // '16' is a numeric string: 16 >= 8
    ['version > 9', a100, true], // '10' > 9 numerically, although '10' < '9' as text
    ['zip == 1234', a100, true], // '01234' reads as the number 1234
    // a quoted literal is text: compare as strings
    ["cores == '16'", a100, true],
    ["rack == '7'", a100, true], // the number 7 as text is '7'
    ["zip == '01234'", a100, true],
    ["zip == '1234'", a100, false],
    ["version > '9'", a100, false], // text order: '10' < '9'
    ["zone < 'b'", a100, true],
    ["zone >= 'a'", a100, true],
    ['zone == 1', a100, false], // 'a' is not a number: compared as text
    ["zone != 'b'", a100, true],
    // capacities, which shadow labels of the same name
    ['cpu >= 8000', a100, true],
    ["cpu == 'label-cpu'", a100, false],
    ['memoryMb > 65536', a100, false],
    ['gpus >= 4 && gpus < 5', a100, true],
    ['gpus == 0', bare, true],
    ['slots == 8', a100, true],
    ['slots >= 1000000', bare, true], // no slot limit: more than any number
    ['slots == 8', bare, false],
    // labels with dots and dashes, and names that live on Object.prototype
    ["topo.row-1 == 'x'", a100, true],
    ["constructor != 'x'", a100, true],
    ["toString == 'x'", a100, false],
    ["__proto__ in ('x')", a100, false],
    // `>= ''` tests that a label is present, whatever its value
    ["zone >= ''", a100, true],
    ["rack >= ''", a100, true],
    ["zone >= ''", bare, false],
    // in-lists mix numbers and text
    ['rack in (1, 7)', a100, true],
    ["rack in ('7')", a100, true],
    ["gpu_model in ('H100')", a100, false],
    // precedence, parentheses and negation
    ["zone == 'b' && rack == 7 || gpus == 4", a100, true],
    ["zone == 'b' && (rack == 7 || gpus == 4)", a100, false],
    ["!zone == 'b' && rack == 7", a100, true],
    ["!(zone == 'a' && rack == 7)", a100, false],
    ["!!(zone == 'a')", a100, true],
    ["zone == 'b' || zone == 'c' || zone == 'a'", a100, true],
    ['3 < rack', a100, true],
    ['8 < rack', a100, false],
  ])('%s on %o is %s', (src, host, expected) => {
    expect(matches(src, host)).toBe(expected);
  });

  it('agrees with the printed form of the same expression', () => {
    const srcs = ["zone == 'b' && rack == 7 || gpus == 4", "!(zone in ('a')) || 3 < cpu"];
    for (const src of srcs) {
      const printed = printSelect(astOf(src));
      for (const host of [a100, bare]) expect(matches(printed, host)).toBe(matches(src, host));
    }
  });

  it('is the negation of its ! form, on any labels', () => {
    const labelValue = fc.oneof(fc.string({ maxLength: 3 }), fc.integer({ min: -5, max: 5 }), fc.constantFrom('3', '-2', '1.5'));
    const host = fc.record({ x: fc.option(labelValue, { nil: undefined }) }).map(({ x }): SelectHost => ({
      labels: x === undefined ? {} : { x },
      capacity: { cpu: 1, memoryMb: 1 },
      gpus: 0,
    }));
    const expr = fc.tuple(
      fc.constantFrom('==', '!=', '<', '<=', '>', '>='),
      fc.oneof(fc.integer({ min: -5, max: 5 }).map(String), fc.constantFrom("'3'", "'a'", "''")),
    );
    fc.assert(
      fc.property(host, expr, (h, [op, lit]) => {
        expect(matches(`!(x ${op} ${lit})`, h)).toBe(!matches(`x ${op} ${lit}`, h));
      }),
    );
  });
});

describe('selectLabels', () => {
  it('lists the names an expression reads, sorted, once each', () => {
    const parsed = parseSelect("zone == 'a' && (gpus > 1 || !(zone in ('b')) || 2 < rack)");
    expect(parsed.ok && selectLabels(parsed.ast)).toEqual(['gpus', 'rack', 'zone']);
    expect(selectLabels({ kind: 'all' })).toEqual([]);
  });
});
