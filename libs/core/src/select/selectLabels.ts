import type { SelectAst, SelectNode } from './selectAst.ts';

/** The names a select expression reads (labels and capacity names), sorted and without repeats. */
export function selectLabels(ast: SelectAst): string[] {
  const names = new Set<string>();
  if (ast.kind !== 'all') collect(ast, names);
  return [...names].sort();
}

function collect(node: SelectNode, names: Set<string>): void {
  switch (node.kind) {
    case 'compare':
    case 'in':
      names.add(node.name);
      return;
    case 'not':
      collect(node.operand, names);
      return;
    case 'and':
    case 'or':
      for (const operand of node.operands) collect(operand, names);
      return;
    default: {
      const unknown: never = node;
      return unknown;
    }
  }
}
