import { NUMBER_LITERAL } from './selectAst.ts';
import type { CompareOp, SelectAst, SelectNode, SelectValue } from './selectAst.ts';

/** What a select expression can see of a host: its labels, its capacity and its GPU count. */
export interface SelectHost {
  labels: Readonly<Record<string, string | number>>;
  capacity: { cpu: number; memoryMb: number; slots?: number };
  gpus: number;
}

const NUMERIC_STRING = new RegExp(`^${NUMBER_LITERAL.source}$`);

/**
 * Whether `host` passes the select expression: names `cpu`, `memoryMb`, `slots` and `gpus` read
 * the host's capacity (they shadow labels of the same name), any other name reads a label.
 */
export function evalSelect(ast: SelectAst, host: SelectHost): boolean {
  return ast.kind === 'all' || evalNode(ast, host);
}

function evalNode(node: SelectNode, host: SelectHost): boolean {
  switch (node.kind) {
    case 'compare':
      return compare(lookup(host, node.name), node.op, node.value);
    case 'in': {
      const actual = lookup(host, node.name);
      return node.values.some((value) => compare(actual, '==', value));
    }
    case 'not':
      return !evalNode(node.operand, host);
    case 'and':
      return node.operands.every((operand) => evalNode(operand, host));
    case 'or':
      return node.operands.some((operand) => evalNode(operand, host));
    default: {
      const unknown: never = node;
      return unknown;
    }
  }
}

function lookup(host: SelectHost, name: string): SelectValue | undefined {
  switch (name) {
    case 'cpu':
      return host.capacity.cpu;
    case 'memoryMb':
      return host.capacity.memoryMb;
    case 'slots':
      // no slot limit: more slots than any number a select can name
      return host.capacity.slots ?? Number.POSITIVE_INFINITY;
    case 'gpus':
      return host.gpus;
    default:
      // own labels only: `constructor` or `toString` must not read the prototype
      return Object.hasOwn(host.labels, name) ? host.labels[name] : undefined;
  }
}

function compare(actual: SelectValue | undefined, op: CompareOp, literal: SelectValue): boolean {
  // a missing label fails every comparison except `!=`
  if (actual === undefined) return op === '!=';
  const number = asNumber(actual);
  if (number !== undefined && typeof literal === 'number') return holds(op, number, literal);
  return holds(op, String(actual), String(literal));
}

function asNumber(value: SelectValue): number | undefined {
  if (typeof value === 'number') return value;
  return NUMERIC_STRING.test(value) ? Number(value) : undefined;
}

function holds<T extends string | number>(op: CompareOp, a: T, b: T): boolean {
  switch (op) {
    case '==':
      return a === b;
    case '!=':
      return a !== b;
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
  }
}
