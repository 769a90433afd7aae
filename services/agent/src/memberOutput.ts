import { createWriteStream, mkdirSync } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { LineSplitter } from './lineSplitter.ts';
import type { OutputPublisher, OutputStreamName } from './outputPublisher.ts';

/** Where one member's stdout and stderr go: its local file (as they come) and MUSTER_OUTPUT (as lines). */
export interface MemberOutput {
  write(stream: OutputStreamName, chunk: Uint8Array): void;
  /** Publishes what is left of the last lines and closes the file. */
  end(): Promise<void>;
}

/** Lines longer than this many characters are cut into several (the file keeps them whole). */
const MAX_LINE_CHARS = 16 * 1024;

/** The output of one member of one attempt: appended to `file` (null: no file) and published as lines (null: not published). */
export function memberOutput(opts: {
  file: string | null;
  publisher: OutputPublisher | null;
  jobId: string;
  member: number;
  attempt: number;
}): MemberOutput {
  let file: WriteStream | null = null;
  if (opts.file !== null) {
    mkdirSync(dirname(opts.file), { recursive: true });
    file = createWriteStream(opts.file, { flags: 'a' });
    // a full disk must not end the agent: the member's lines still go to the stream
    file.on('error', () => undefined);
  }
  const splitters: Record<OutputStreamName, LineSplitter> = { stdout: new LineSplitter(MAX_LINE_CHARS), stderr: new LineSplitter(MAX_LINE_CHARS) };
  const publish = (stream: OutputStreamName, lines: string[]): void => {
    if (lines.length > 0) opts.publisher?.add(opts.jobId, opts.member, opts.attempt, stream, lines);
  };
  let ended: Promise<void> | null = null;
  return {
    write(stream, chunk) {
      if (ended !== null) return;
      file?.write(chunk);
      publish(stream, splitters[stream].push(chunk));
    },
    end() {
      ended ??= (async () => {
        publish('stdout', splitters.stdout.end());
        publish('stderr', splitters.stderr.end());
        if (file !== null) {
          const f = file;
          await new Promise<void>((resolve) => f.end(resolve));
        }
      })();
      return ended;
    },
  };
}
