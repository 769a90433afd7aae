/** A literal in a select expression: quoted text is a string, unquoted digits are a number. */
export type SelectValue = string | number;

/** The comparison operators of the select language. */
export type CompareOp = '==' | '!=' | '<' | '<=' | '>' | '>=';

/**
 * One node of a parsed select expression: plain JSON data, so it can live in immer state and be
 * serialised. A comparison always has the name on the left (`3 < cpu` is stored as `cpu > 3`);
 * `and`/`or` hold two or more operands.
 */
export type SelectNode =
  | { kind: 'compare'; op: CompareOp; name: string; value: SelectValue }
  | { kind: 'in'; name: string; values: SelectValue[] }
  | { kind: 'not'; operand: SelectNode }
  | { kind: 'and'; operands: SelectNode[] }
  | { kind: 'or'; operands: SelectNode[] };

/** A parsed select expression: `all` is the empty expression, which matches every host. */
export type SelectAst = { kind: 'all' } | SelectNode;

/** Label names (and the capacity names) a select expression may read. */
export const LABEL_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/** Deepest nesting of parentheses and `!` that `parseSelect` accepts (bounds recursion). */
export const MAX_SELECT_DEPTH = 64;

/** The number syntax of the select language; a string label value written this way is a number. */
export const NUMBER_LITERAL = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/;
