// A pino logger whose lines a test reads back, parsed.
import { Writable } from 'node:stream';
import pino from 'pino';

/** A log line as a test reads it: its level, message and fields. */
export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A pino logger at `level` whose lines are parsed and handed to `onLine` (a chunk may hold several). */
export function capturingLogger(level: pino.Level, onLine: (line: LogLine) => void): pino.Logger {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const text of chunk.toString().split('\n')) if (text !== '') onLine(JSON.parse(text) as LogLine);
      done();
    },
  });
  return pino({ level }, sink);
}
