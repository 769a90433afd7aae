import { readFileSync } from 'node:fs';
import type { Input, LoggedTransaction, Transaction } from '@muster/core';
import type { OfflineHistory } from './auditSource.ts';
import { AuditorError } from './auditorError.ts';

/** The file that holds a history's inputs: `name.jsonl` → `name.inputs.jsonl`. */
export function inputsPathOf(historyPath: string): string {
  return historyPath.endsWith('.jsonl') ? `${historyPath.slice(0, -'.jsonl'.length)}.inputs.jsonl` : `${historyPath}.inputs.jsonl`;
}

/** A log as JSON lines, one `{"seq", "tx"}` per line. */
export function historyLines(log: readonly LoggedTransaction[]): string {
  return log.map(({ seq, tx }) => `${JSON.stringify({ seq, tx })}\n`).join('');
}

/** Inputs as JSON lines, one `{"seq", "subject", "data"}` per line. */
export function inputLines(inputs: readonly Input[]): string {
  return inputs.map(({ seq, subject, data }) => `${JSON.stringify({ seq, subject, data })}\n`).join('');
}

/**
 * Reads a recorded history: the log's JSON lines at `path` and, when present beside it, its inputs
 * (`name.inputs.jsonl`); an unreadable file or a line that is not a transaction is a `bad-history` error.
 */
export function readHistoryFile(path: string): OfflineHistory {
  const transactions = parseLines(path, readText(path, true) ?? '', (value, where) => {
    const v = value as { seq?: unknown; tx?: unknown } | null;
    if (typeof v !== 'object' || v === null || !Number.isInteger(v.seq) || typeof v.tx !== 'object' || v.tx === null) {
      throw new AuditorError('bad-history', `${where}: not a {"seq", "tx"} line`);
    }
    return { seq: v.seq as number, tx: v.tx as Transaction };
  });
  const inputsText = readText(inputsPathOf(path), false);
  const history: OfflineHistory = { transactions, lastSeq: transactions.at(-1)?.seq ?? 0 };
  if (inputsText !== null) {
    history.inputs = parseLines(inputsPathOf(path), inputsText, (value, where) => {
      const v = value as Partial<Input> | null;
      if (typeof v !== 'object' || v === null || !Number.isInteger(v.seq) || typeof v.subject !== 'string' || typeof v.data !== 'string') {
        throw new AuditorError('bad-history', `${where}: not a {"seq", "subject", "data"} line`);
      }
      return { seq: v.seq as number, subject: v.subject, data: v.data };
    });
  }
  return history;
}

function readText(path: string, required: boolean): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if (!required && (err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new AuditorError('bad-history', `cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
}

function parseLines<T>(path: string, text: string, each: (value: unknown, where: string) => T): T[] {
  const out: T[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const where = `${path}:${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new AuditorError('bad-history', `${where}: not JSON (${(err as Error).message})`, { cause: err });
    }
    out.push(each(value, where));
  });
  return out;
}
