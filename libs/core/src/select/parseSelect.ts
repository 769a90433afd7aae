import { MAX_SELECT_DEPTH } from './selectAst.ts';
import type { CompareOp, SelectAst, SelectNode, SelectValue } from './selectAst.ts';
import { tokenizeSelect } from './tokenizeSelect.ts';
import type { SelectToken } from './tokenizeSelect.ts';

/** Where and why a select expression does not parse; `position` is a 0-based character offset. */
export interface SelectSyntaxError {
  position: number;
  message: string;
}

/** The outcome of `parseSelect`: the AST, or the first syntax error. */
export type SelectParseResult = { ok: true; ast: SelectAst } | { ok: false; error: SelectSyntaxError };

// `3 < cpu` reads as `cpu > 3`: the name always goes on the left of the stored comparison
const FLIPPED: Readonly<Record<CompareOp, CompareOp>> = {
  '==': '==', '!=': '!=', '<': '>', '<=': '>=', '>': '<', '>=': '<=',
};

// Thrown only inside this module and caught by parseSelect: a syntax error is data to callers.
class SyntaxFailure {
  constructor(readonly error: SelectSyntaxError) {}
}

/**
 * Parses a select expression (DESIGN.md §4, docs/job-spec.md) into a JSON-only AST; never throws.
 * Empty or whitespace-only source parses to `{kind: 'all'}`.
 */
export function parseSelect(src: string): SelectParseResult {
  const parser = new Parser(tokenizeSelect(src));
  try {
    return { ok: true, ast: parser.parseAll() };
  } catch (e) {
    if (e instanceof SyntaxFailure) return { ok: false, error: e.error };
    throw e;
  }
}

class Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: SelectToken[]) {}

  parseAll(): SelectAst {
    if (this.peek().kind === 'end') return { kind: 'all' };
    const ast = this.parseOr();
    const next = this.peek();
    if (next.kind !== 'end') this.fail(next, "expected '&&', '||' or the end of the expression");
    return ast;
  }

  private parseOr(): SelectNode {
    const operands = [this.parseAnd()];
    while (this.peek().kind === 'or') {
      this.index++;
      operands.push(this.parseAnd());
    }
    return operands.length === 1 ? (operands[0] as SelectNode) : { kind: 'or', operands };
  }

  private parseAnd(): SelectNode {
    const operands = [this.parseUnary()];
    while (this.peek().kind === 'and') {
      this.index++;
      operands.push(this.parseUnary());
    }
    return operands.length === 1 ? (operands[0] as SelectNode) : { kind: 'and', operands };
  }

  private parseUnary(): SelectNode {
    const token = this.peek();
    if (token.kind === 'not') {
      this.index++;
      this.enter(token);
      const operand = this.parseUnary();
      this.depth--;
      return { kind: 'not', operand };
    }
    if (token.kind === 'lparen') {
      this.index++;
      this.enter(token);
      const inner = this.parseOr();
      this.expect('rparen', "expected '&&', '||' or ')'");
      this.depth--;
      return inner;
    }
    return this.parseComparison();
  }

  private parseComparison(): SelectNode {
    const first = this.next();
    if (first.kind === 'name') return this.parseAfterName(first.text);
    if (first.kind === 'string' || first.kind === 'number') {
      const op = this.expectOp("expected a comparison operator");
      const name = this.next();
      if (name.kind !== 'name') this.fail(name, 'expected a label name', ': one side of a comparison must be a label');
      return { kind: 'compare', op: FLIPPED[op], name: name.text, value: first.value };
    }
    return this.fail(first, "expected a label name, a value, '!' or '('");
  }

  private parseAfterName(name: string): SelectNode {
    const token = this.peek();
    if (token.kind === 'name' && token.text === 'in') {
      this.index++;
      this.expect('lparen', "expected '(' after 'in'");
      const values = [this.parseValue()];
      while (this.peek().kind === 'comma') {
        this.index++;
        values.push(this.parseValue());
      }
      this.expect('rparen', "expected ',' or ')'");
      return { kind: 'in', name, values };
    }
    const op = this.expectOp("expected a comparison operator or 'in'");
    return { kind: 'compare', op, name, value: this.parseValue() };
  }

  private parseValue(): SelectValue {
    const token = this.next();
    if (token.kind === 'string' || token.kind === 'number') return token.value;
    if (token.kind === 'name') {
      // `zone == a` is the common slip: say how to write text, and that two labels do not compare
      this.fail(token, 'expected a value', `: write text in quotes, as in '${token.text}' (a label compares only with a value)`);
    }
    return this.fail(token, 'expected a value');
  }

  private expectOp(what: string): CompareOp {
    const token = this.next();
    if (token.kind !== 'op') return this.fail(token, what);
    return token.op;
  }

  private expect(kind: SelectToken['kind'], what: string): void {
    const token = this.next();
    if (token.kind !== kind) this.fail(token, what);
  }

  private enter(token: SelectToken): void {
    this.depth++;
    if (this.depth > MAX_SELECT_DEPTH) {
      this.fail(token, `nesting deeper than ${MAX_SELECT_DEPTH} levels`);
    }
  }

  private peek(): SelectToken {
    return this.tokens[this.index] as SelectToken;
  }

  private next(): SelectToken {
    const token = this.peek();
    // the last token is always `end` or `error`; stay on it rather than run off the array
    if (token.kind !== 'end' && token.kind !== 'error') this.index++;
    return token;
  }

  private fail(token: SelectToken, what: string, hint = ''): never {
    if (token.kind === 'error') throw new SyntaxFailure({ position: token.pos, message: token.message });
    const found = token.kind === 'end' ? '' : ` (found '${token.text}')`;
    throw new SyntaxFailure({ position: token.pos, message: `${what} at position ${token.pos}${found}${hint}` });
  }
}
