import { NUMBER_LITERAL } from './selectAst.ts';
import type { CompareOp } from './selectAst.ts';

/** Punctuation that is not a comparison operator. */
export type SymbolKind = 'and' | 'or' | 'not' | 'lparen' | 'rparen' | 'comma';

/** One token of a select expression; `pos` is its 0-based offset and `text` its source slice. */
export type SelectToken =
  | { kind: 'name'; pos: number; text: string }
  | { kind: 'string'; pos: number; text: string; value: string }
  | { kind: 'number'; pos: number; text: string; value: number }
  | { kind: 'op'; pos: number; text: string; op: CompareOp }
  | { kind: SymbolKind | 'end'; pos: number; text: string }
  | { kind: 'error'; pos: number; text: string; message: string };

const NAME = /[A-Za-z_][A-Za-z0-9_.-]*/y;
const NUMBER = new RegExp(NUMBER_LITERAL.source, 'y');
const NAME_CHAR = /[A-Za-z0-9_.]/;
const WHITESPACE = /\s/;

// two-character operators before their one-character prefixes ('!=' before '!', '<=' before '<')
const OPERATORS: readonly CompareOp[] = ['==', '!=', '<=', '>=', '<', '>'];
const SYMBOLS: ReadonlyArray<readonly [string, SymbolKind]> = [
  ['&&', 'and'], ['||', 'or'], ['!', 'not'], ['(', 'lparen'], [')', 'rparen'], [',', 'comma'],
];

const DID_YOU_MEAN: Readonly<Record<string, string>> = { '=': '==', '&': '&&', '|': '||' };

/**
 * Splits a select expression into tokens, ending with an `end` token, or with an `error` token at
 * the first character that starts no token (the parser reports it only if it gets that far).
 */
export function tokenizeSelect(src: string): SelectToken[] {
  const tokens: SelectToken[] = [];
  let i = 0;
  for (;;) {
    while (i < src.length && WHITESPACE.test(src.charAt(i))) i++;
    if (i >= src.length) {
      tokens.push({ kind: 'end', pos: i, text: '' });
      return tokens;
    }
    const token = readToken(src, i);
    tokens.push(token);
    if (token.kind === 'error') return tokens;
    i += token.text.length;
  }
}

function readToken(src: string, pos: number): SelectToken {
  const ch = src.charAt(pos);
  if (ch === '"' || ch === "'") return readString(src, pos, ch);
  // a '-' followed by a digit starts a negative number, never a name
  if (/[0-9]/.test(ch) || (ch === '-' && /[0-9]/.test(src.charAt(pos + 1)))) return readNumber(src, pos);
  NAME.lastIndex = pos;
  const name = NAME.exec(src);
  if (name) return { kind: 'name', pos, text: name[0] };
  for (const op of OPERATORS) {
    if (src.startsWith(op, pos)) return { kind: 'op', pos, text: op, op };
  }
  for (const [text, kind] of SYMBOLS) {
    if (src.startsWith(text, pos)) return { kind, pos, text };
  }
  const hint = DID_YOU_MEAN[ch];
  const suffix = hint === undefined ? '' : ` (did you mean '${hint}'?)`;
  return { kind: 'error', pos, text: ch, message: `unexpected character '${ch}' at position ${pos}${suffix}` };
}

function readString(src: string, pos: number, quote: string): SelectToken {
  let value = '';
  let i = pos + 1;
  while (i < src.length) {
    const ch = src.charAt(i);
    if (ch === quote) return { kind: 'string', pos, text: src.slice(pos, i + 1), value };
    // a backslash takes the next character literally: \' \" \\
    if (ch === '\\' && i + 1 < src.length) {
      value += src.charAt(i + 1);
      i += 2;
      continue;
    }
    value += ch;
    i++;
  }
  return { kind: 'error', pos, text: src.slice(pos), message: `unterminated string at position ${pos}` };
}

function readNumber(src: string, pos: number): SelectToken {
  NUMBER.lastIndex = pos;
  const text = (NUMBER.exec(src) as RegExpExecArray)[0];
  const end = pos + text.length;
  if (NAME_CHAR.test(src.charAt(end))) {
    return { kind: 'error', pos, text, message: `invalid number '${text}${src.charAt(end)}' at position ${pos}` };
  }
  const value = Number(text);
  if (!Number.isFinite(value)) {
    return { kind: 'error', pos, text, message: `number out of range at position ${pos}` };
  }
  // -0 and 0 are the same number to every comparison; keep one so that printing round-trips
  return { kind: 'number', pos, text, value: value === 0 ? 0 : value };
}
