import type { SelectAst, SelectNode, SelectValue } from './selectAst.ts';

/**
 * The canonical source text of a select AST (single quotes, one space around operators, only the
 * parentheses the structure needs); `parseSelect(printSelect(ast))` gives back `ast`.
 */
export function printSelect(ast: SelectAst): string {
  return ast.kind === 'all' ? '' : printNode(ast);
}

function printNode(node: SelectNode): string {
  switch (node.kind) {
    case 'compare':
      return `${node.name} ${node.op} ${printValue(node.value)}`;
    case 'in':
      return `${node.name} in (${node.values.map(printValue).join(', ')})`;
    case 'not':
      // `!!(a == 1)` needs no parentheses between the two `!`; anything else gets them for clarity
      return node.operand.kind === 'not' ? `!${printNode(node.operand)}` : `!(${printNode(node.operand)})`;
    case 'and':
      // a nested `and` keeps its parentheses so that the AST round-trips exactly
      return node.operands.map((o) => (o.kind === 'and' || o.kind === 'or' ? `(${printNode(o)})` : printNode(o))).join(' && ');
    case 'or':
      return node.operands.map((o) => (o.kind === 'or' ? `(${printNode(o)})` : printNode(o))).join(' || ');
    default: {
      const unknown: never = node;
      return unknown;
    }
  }
}

function printValue(value: SelectValue): string {
  if (typeof value === 'number') return String(value);
  return `'${value.replace(/[\\']/g, (ch) => `\\${ch}`)}'`;
}
