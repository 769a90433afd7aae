import type { Bus } from './bus.ts';
import { natsOf } from './natsBus.ts';
import { OUTPUT_STREAM } from './names.ts';
import { subjectMessages } from './subjectMessages.ts';
import type { StreamMessage } from './subjectMessages.ts';
import { subjects } from './subjects.ts';

/** Options of `readOutput`. */
export interface ReadOutputOptions {
  /** Keep reading what arrives after the stored output (default false: end once it is read). */
  follow?: boolean;
  /** Only this member's output. */
  member?: number;
  /** Only the latest stored batch of each member (a tail whose cost does not grow with the output). */
  latest?: boolean;
  /** Start at this stream sequence (resuming a read); overrides `latest`. */
  fromSeq?: number;
  /** Stops the read; the iterator then ends. */
  signal?: AbortSignal;
}

/**
 * The stored output batches of one job (every node, every member, or one member) in MUSTER_OUTPUT, in stream order;
 * without `follow` it ends at the last one stored when it looked. Rejects when the stream does not
 * exist (`isStreamNotFound`).
 */
export async function* readOutput(bus: Bus, jobId: string, opts: ReadOutputOptions = {}): AsyncGenerator<StreamMessage, void, undefined> {
  const filter = opts.member === undefined ? subjects.jobOutput(jobId) : subjects.memberOutput(jobId, opts.member);
  if (opts.follow !== true) {
    const info = await (await natsOf(bus).jsm).streams.info(OUTPUT_STREAM, { subjects_filter: filter });
    const stored = Object.values(info.state.subjects ?? {}).reduce((n, c) => n + c, 0);
    if (stored === 0) return;
    const last = info.state.last_seq;
    const stop = new AbortController();
    const signal = opts.signal === undefined ? stop.signal : AbortSignal.any([opts.signal, stop.signal]);
    for await (const m of subjectMessages(bus, OUTPUT_STREAM, filter, { signal, ...start(opts) })) {
      if (m.seq <= last) yield m;
      // nothing more on the filter, or past where the stream ended when it was counted
      if (m.pending === 0 || m.seq >= last) {
        stop.abort();
        return;
      }
    }
    return;
  }
  yield* subjectMessages(bus, OUTPUT_STREAM, filter, { ...(opts.signal === undefined ? {} : { signal: opts.signal }), ...start(opts) });
}

function start(opts: ReadOutputOptions): { fromSeq?: number; deliver?: 'last-per-subject' } {
  if (opts.fromSeq !== undefined) return { fromSeq: opts.fromSeq };
  return opts.latest === true ? { deliver: 'last-per-subject' } : {};
}
