import { publishOutput, subjects } from '@muster/bus';
import type { Bus } from '@muster/bus';
import type { Logger } from 'pino';

/** Which of a member's streams a line came from. */
export type OutputStreamName = 'stdout' | 'stderr';

/** One message of MUSTER_OUTPUT: consecutive lines of one member's stream in one attempt. */
export interface OutputBatch {
  attempt: number;
  stream: OutputStreamName;
  lines: string[];
}

/** Limits of an output publisher. */
export interface OutputLimits {
  /** How long a line may wait for its batch to be sent (default 200 ms). */
  flushMs: number;
  /** A batch is sent once its lines reach this many bytes (default 64 KiB). */
  batchBytes: number;
  /** The most bytes waiting to be sent, over every member; a line past it is dropped and counted (default 4 MiB). */
  maxBufferedBytes: number;
  /** The most batches awaiting the stream's ack at once (default 8). */
  maxInFlight: number;
}

/** What an output publisher has done so far. */
export interface OutputCounts {
  publishedLines: number;
  /** Lines dropped: the buffer was full (a slow or unreachable stream), or a batch was refused. */
  droppedLines: number;
}

/** Publishes members' output lines of one node on `muster.out.<nodeId>.<jobId>.<member>`, batched, never blocking. */
export interface OutputPublisher {
  /** Queues lines of one member; never waits (past the buffer limit the lines are dropped and counted). */
  add(jobId: string, member: number, attempt: number, stream: OutputStreamName, lines: readonly string[]): void;
  counts(): OutputCounts;
  /** Sends what is queued and waits for the acks (bounded by the publish timeout). */
  close(): Promise<void>;
}

const DEFAULT_LIMITS: OutputLimits = { flushMs: 200, batchBytes: 64 * 1024, maxBufferedBytes: 4 * 1024 * 1024, maxInFlight: 8 };
const ENCODER = new TextEncoder();
const PUBLISH_TIMEOUT_MS = 5_000;

interface Queued {
  subject: string;
  batch: OutputBatch;
  bytes: number;
}

/**
 * An output publisher for one node: lines are grouped per member, stream and attempt into batches
 * sent every `flushMs` or once `batchBytes` are waiting, at most `maxInFlight` at a time, in order
 * (publishes on one connection are stored in order). When the stream is slow or away, batches wait
 * in a buffer of `maxBufferedBytes`; a line that does not fit is dropped and counted, and the count
 * is logged, so a member's writes never wait on NATS.
 */
export function createOutputPublisher(deps: { bus: Bus; nodeId: string; logger: Logger; limits?: Partial<OutputLimits> }): OutputPublisher {
  const limits = { ...DEFAULT_LIMITS, ...deps.limits };
  const queue: Queued[] = [];
  // the batch still being filled per subject (the last one queued for it, if not sent yet)
  const open = new Map<string, Queued>();
  let buffered = 0;
  let inFlight = 0;
  const counts: OutputCounts = { publishedLines: 0, droppedLines: 0 };
  let droppedSinceLog = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const settled = new Set<Promise<void>>();

  const noteDropped = (n: number, why: string): void => {
    counts.droppedLines += n;
    if (droppedSinceLog === 0) deps.logger.warn({ nodeId: deps.nodeId, dropped: n, droppedTotal: counts.droppedLines, why }, 'member output dropped (not published; the local file has it)');
    droppedSinceLog += n;
  };

  // sends queued batches in order, stopping at one still being filled
  const send = (): void => {
    while (inFlight < limits.maxInFlight && queue.length > 0) {
      const q = queue[0] as Queued;
      if (open.get(q.subject) === q) return;
      queue.shift();
      inFlight += 1;
      const p = publishOutput(deps.bus, q.subject, ENCODER.encode(JSON.stringify(q.batch)), { timeoutMs: PUBLISH_TIMEOUT_MS })
        .then(
          () => {
            counts.publishedLines += q.batch.lines.length;
          },
          (err: unknown) => {
            noteDropped(q.batch.lines.length, (err as Error).message);
          },
        )
        .finally(() => {
          inFlight -= 1;
          buffered -= q.bytes;
          settled.delete(p);
          if (droppedSinceLog > 0 && queue.length === 0) {
            deps.logger.info({ nodeId: deps.nodeId, dropped: droppedSinceLog, droppedTotal: counts.droppedLines }, 'member output publishing caught up');
            droppedSinceLog = 0;
          }
          send();
        });
      settled.add(p);
    }
  };

  const schedule = (): void => {
    timer ??= setTimeout(() => {
      timer = null;
      open.clear();
      send();
      if (queue.length > 0) schedule();
    }, limits.flushMs);
  };

  return {
    add(jobId, member, attempt, stream, lines) {
      const subject = subjects.output(deps.nodeId, jobId, member);
      for (const line of lines) {
        const size = Buffer.byteLength(line) + 4;
        if (buffered + size > limits.maxBufferedBytes) {
          noteDropped(1, 'output buffer full');
          continue;
        }
        let q = open.get(subject);
        if (q === undefined || q.batch.attempt !== attempt || q.batch.stream !== stream || q.bytes + size > limits.batchBytes) {
          q = { subject, batch: { attempt, stream, lines: [] }, bytes: 0 };
          open.set(subject, q);
          queue.push(q);
        }
        q.batch.lines.push(line);
        q.bytes += size;
        buffered += size;
        if (q.bytes >= limits.batchBytes) open.delete(subject);
      }
      send();
      schedule();
    },
    counts: () => ({ ...counts }),
    async close() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
      open.clear();
      send();
      while (settled.size > 0 || queue.length > 0) {
        await Promise.allSettled([...settled]);
        send();
        if (settled.size === 0 && queue.length > 0) break;
      }
    },
  };
}
