import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSelect } from './parseSelect.ts';
import { printSelect } from './printSelect.ts';
import type { CompareOp, SelectNode, SelectValue } from './selectAst.ts';
import { MAX_SELECT_DEPTH } from './selectAst.ts';

function ast(src: string) {
  const result = parseSelect(src);
  if (!result.ok) throw new Error(`did not parse: ${result.error.message}`);
  return result.ast;
}

describe('parseSelect', () => {
  it('parses the DESIGN.md example', () => {
    expect(ast("zone == 'a' && gpu_model in ('A100','H100')")).toEqual({
      kind: 'and',
      operands: [
        { kind: 'compare', op: '==', name: 'zone', value: 'a' },
        { kind: 'in', name: 'gpu_model', values: ['A100', 'H100'] },
      ],
    });
  });

  it.each(['', '   ', '\n\t '])('parses empty source %j to all', (src) => {
    expect(ast(src)).toEqual({ kind: 'all' });
  });

  it('gives ! precedence over &&, and && over ||', () => {
    expect(ast("!a == 1 && b == 2 || c == 3")).toEqual({
      kind: 'or',
      operands: [
        {
          kind: 'and',
          operands: [
            { kind: 'not', operand: { kind: 'compare', op: '==', name: 'a', value: 1 } },
            { kind: 'compare', op: '==', name: 'b', value: 2 },
          ],
        },
        { kind: 'compare', op: '==', name: 'c', value: 3 },
      ],
    });
  });

  it('keeps the structure parentheses give', () => {
    expect(ast('a == 1 && (b == 2 || c == 3)')).toEqual({
      kind: 'and',
      operands: [
        { kind: 'compare', op: '==', name: 'a', value: 1 },
        {
          kind: 'or',
          operands: [
            { kind: 'compare', op: '==', name: 'b', value: 2 },
            { kind: 'compare', op: '==', name: 'c', value: 3 },
          ],
        },
      ],
    });
  });

  it('flattens chains of one operator', () => {
    expect(ast('a==1&&b==2&&c==3')).toMatchObject({ kind: 'and', operands: [{}, {}, {}] });
  });

  it.each<[string, CompareOp, SelectValue]>([
    ['3 < cpu', '>', 3],
    ['3 <= cpu', '>=', 3],
    ['3 > cpu', '<', 3],
    ['3 >= cpu', '<=', 3],
    ["'a' == cpu", '==', 'a'],
    ["'a' != cpu", '!=', 'a'],
  ])('stores %s with the name on the left', (src, op, value) => {
    expect(ast(src)).toEqual({ kind: 'compare', op, name: 'cpu', value });
  });

  it.each<[string, SelectValue]>([
    ['x == 42', 42],
    ['x == -7', -7],
    ['x == 2.5', 2.5],
    ['x == -0.25', -0.25],
    ['x == 1e3', 1000],
    ['x == -0', 0],
    ['x == "dq"', 'dq'],
    ["x == 'it\\'s'", "it's"],
    ['x == "back\\\\slash"', 'back\\slash'],
    ["x == '8'", '8'],
  ])('reads the literal in %s', (src, value) => {
    expect(ast(src)).toEqual({ kind: 'compare', op: '==', name: 'x', value });
  });

  it('accepts label names with dots, dashes and underscores', () => {
    expect(ast("topology.kubernetes-io_zone != 'b'")).toEqual({
      kind: 'compare', op: '!=', name: 'topology.kubernetes-io_zone', value: 'b',
    });
  });

  it("reads a label named 'in' as a name where a name is expected", () => {
    expect(ast("in in ('x')")).toEqual({ kind: 'in', name: 'in', values: ['x'] });
  });

  it.each<[string, number, string]>([
    ['zone == ', 8, 'expected a value at position 8'],
    ["zone == 'a' &&", 14, "expected a label name, a value, '!' or '(' at position 14"],
    ['zone', 4, "expected a comparison operator or 'in' at position 4"],
    ["zone = 'a'", 5, "unexpected character '=' at position 5 (did you mean '=='?)"],
    ["zone == 'a' & x == 1", 12, "unexpected character '&' at position 12 (did you mean '&&'?)"],
    ["zone == 'a' | x == 1", 12, "unexpected character '|' at position 12 (did you mean '||'?)"],
    ["zone == 'a", 8, 'unterminated string at position 8'],
    ['zone == a', 8, "expected a value at position 8 (found 'a'): write text in quotes, as in 'a' (a label compares only with a value)"],
    ["(zone == 'a'", 12, "expected '&&', '||' or ')' at position 12"],
    ["zone == 'a')", 11, "expected '&&', '||' or the end of the expression at position 11 (found ')')"],
    ["zone == 'a' zone", 12, "expected '&&', '||' or the end of the expression at position 12 (found 'zone')"],
    ['zone in', 7, "expected '(' after 'in' at position 7"],
    ['zone in ()', 9, "expected a value at position 9 (found ')')"],
    ["zone in ('a' 'b')", 13, "expected ',' or ')' at position 13 (found ''b'')"],
    ['1 == 2', 5, "expected a label name at position 5 (found '2'): one side of a comparison must be a label"],
    ["'a' in ('a')", 4, "expected a comparison operator at position 4 (found 'in')"],
    ['x == 12abc', 5, "invalid number '12a' at position 5"],
    ['x == 1.', 5, "invalid number '1.' at position 5"],
    [`x == 1${'0'.repeat(400)}`, 5, 'number out of range at position 5'],
    ['x == 1 # comment', 7, "unexpected character '#' at position 7"],
    ['&& x == 1', 0, "expected a label name, a value, '!' or '(' at position 0 (found '&&')"],
    ['x == 1 &&& y == 2', 9, "unexpected character '&' at position 9 (did you mean '&&'?)"],
  ])('rejects %j at position %i', (src, position, message) => {
    expect(parseSelect(src)).toEqual({ ok: false, error: { position, message } });
  });

  it('reports the first error in source order, not the first bad character', () => {
    const result = parseSelect("zone == && x == 'unterminated");
    expect(result).toMatchObject({ ok: false, error: { position: 8 } });
  });

  it('bounds nesting so that deep input cannot overflow the stack', () => {
    const ok = `${'('.repeat(MAX_SELECT_DEPTH)}x == 1${')'.repeat(MAX_SELECT_DEPTH)}`;
    expect(parseSelect(ok).ok).toBe(true);
    const deep = `${'('.repeat(MAX_SELECT_DEPTH + 1)}x == 1${')'.repeat(MAX_SELECT_DEPTH + 1)}`;
    expect(parseSelect(deep)).toEqual({
      ok: false,
      error: { position: MAX_SELECT_DEPTH, message: `nesting deeper than ${MAX_SELECT_DEPTH} levels at position ${MAX_SELECT_DEPTH} (found '(')` },
    });
    expect(parseSelect(`${'!'.repeat(100_000)}x == 1`).ok).toBe(false);
    expect(parseSelect('('.repeat(100_000)).ok).toBe(false);
  });

  it('never throws, whatever the input', () => {
    const alphabet = fc.constantFrom(...'ab_.-019 \'"\\()!=<>&|,in\t'.split(''));
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: alphabet, maxLength: 60 })), (src) => {
        const result = parseSelect(src);
        if (!result.ok) {
          expect(result.error.position).toBeGreaterThanOrEqual(0);
          expect(result.error.position).toBeLessThanOrEqual(src.length);
          expect(result.error.message).toContain(`at position ${result.error.position}`);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

const nameArb = fc.oneof(
  fc.constantFrom('zone', 'cpu', 'memoryMb', 'slots', 'gpus', 'in', 'a.b-c_d'),
  fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.-]{0,8}$/),
);
const valueArb: fc.Arbitrary<SelectValue> = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => (x === 0 ? 0 : x)),
);
const opArb = fc.constantFrom<CompareOp>('==', '!=', '<', '<=', '>', '>=');
const { node: nodeArb } = fc.letrec<{ node: SelectNode }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ kind: fc.constant('compare' as const), op: opArb, name: nameArb, value: valueArb }),
    fc.record({ kind: fc.constant('in' as const), name: nameArb, values: fc.array(valueArb, { minLength: 1, maxLength: 4 }) }),
    fc.record({ kind: fc.constant('not' as const), operand: tie('node') }),
    fc.record({ kind: fc.constant('and' as const), operands: fc.array(tie('node'), { minLength: 2, maxLength: 3 }) }),
    fc.record({ kind: fc.constant('or' as const), operands: fc.array(tie('node'), { minLength: 2, maxLength: 3 }) }),
  ),
}));

describe('printSelect', () => {
  it('prints the canonical form', () => {
    expect(printSelect(ast(" 3<cpu&&(zone=='a'||!(x in (1,\"b\")))"))).toBe("cpu > 3 && (zone == 'a' || !(x in (1, 'b')))");
    expect(printSelect(ast('  '))).toBe('');
  });

  it('round-trips: parse(print(ast)) equals ast', () => {
    fc.assert(
      fc.property(nodeArb, (node) => {
        expect(parseSelect(printSelect(node))).toEqual({ ok: true, ast: node });
      }),
      { numRuns: 1000 },
    );
  });
});
