export type { CompareOp, SelectAst, SelectNode, SelectValue } from './selectAst.ts';
export { LABEL_NAME_PATTERN, MAX_SELECT_DEPTH, NUMBER_LITERAL } from './selectAst.ts';
export type { SelectParseResult, SelectSyntaxError } from './parseSelect.ts';
export { parseSelect } from './parseSelect.ts';
export type { SelectHost } from './evalSelect.ts';
export { evalSelect } from './evalSelect.ts';
export { printSelect } from './printSelect.ts';
export { selectLabels } from './selectLabels.ts';
