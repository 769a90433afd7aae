import { Worker } from 'node:worker_threads';
import type { JetStreamClient } from '@muster/bus';
import type { Transaction } from '@muster/core';
import type { FromWorker, ToWorker, WorkerConnection, WorkerResult } from './workerProtocol.ts';

// A worker is kept for the next audit of the process once one is done (unreferenced: it never keeps
// the process alive): starting one (a thread, tsx, the core and nats.js loaded again) takes 0.3-0.6 s.
let idle: Worker | null = null;

// How many transactions the worker may be behind and still be given a session to re-derive.
const MAX_LAG = 2;

/**
 * The servers and credentials of the audit's own connection, for the worker to open one like it;
 * null when they cannot be told (not a nats.js client, or TLS options, which are not copied).
 */
export function workerConnection(js: JetStreamClient): WorkerConnection | null {
  const nc = (js as unknown as { nc?: { options?: Record<string, unknown> } }).nc;
  const o = nc?.options;
  if (o === undefined || (o.tls !== undefined && o.tls !== null)) return null;
  const servers = typeof o.servers === 'string' ? [o.servers] : Array.isArray(o.servers) ? o.servers : null;
  if (servers === null || servers.length === 0 || !servers.every((s): s is string => typeof s === 'string')) return null;
  const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  const connection: WorkerConnection = { servers, timeoutMs: js.getOptions().timeout ?? 5_000 };
  for (const key of ['user', 'pass', 'token', 'inboxPrefix'] as const) {
    const value = text(o[key]);
    if (value !== undefined) connection[key] = value;
  }
  return connection;
}

/**
 * The worker's share of one audit, seen from the main thread: every transaction the main thread
 * reads is handed on (a copy of its bytes), and `finish` awaits what the worker found.
 */
export class WorkerShare {
  private readonly result: Promise<WorkerResult>;
  private settled = false;
  /** The last transaction handed on, and the last the worker has done (which it sets). */
  private handed = 0;
  private readonly progress = new BigInt64Array(new SharedArrayBuffer(8));
  /** The sequences of the transactions whose sessions the worker re-derives. */
  private readonly sessions = new Set<number>();

  private constructor(private readonly worker: Worker) {
    worker.ref();
    this.result = new Promise<WorkerResult>((resolve, reject) => {
      const onMessage = (msg: FromWorker): void => {
        done();
        if (msg.type === 'result') resolve(msg.result);
        else reject(new Error(`the audit's worker failed: ${msg.message}`));
      };
      const onError = (err: Error): void => {
        done();
        reject(new Error(`the audit's worker failed: ${err.message}`, { cause: err }));
      };
      const onExit = (code: number): void => {
        done();
        reject(new Error(`the audit's worker stopped (exit code ${code})`));
      };
      const done = (): void => {
        this.settled = true;
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
    });
    // a failure is awaited in `finish`; until then its rejection must not go unhandled
    this.result.catch(() => undefined);
  }

  /** Starts the worker's share of an audit (a kept worker, or a new one). */
  static start(connection: WorkerConnection, fromSeq: number, decisions: boolean): WorkerShare {
    // a kept worker that has died since (threadId -1) is replaced
    const worker = idle !== null && idle.threadId !== -1 ? idle : new Worker(new URL('./auditWorkerBoot.js', import.meta.url));
    idle = null;
    const share = new WorkerShare(worker);
    share.post({ type: 'start', connection, fromSeq, decisions, progress: share.progress.buffer as SharedArrayBuffer });
    return share;
  }

  /**
   * Hands on one transaction as stored (the bytes are copied: the reader's buffer is not ours to
   * give away). The session a transaction starts goes to the worker when it is keeping up (at most
   * `MAX_LAG` transactions behind), else the main thread re-derives it: the work goes to whichever
   * thread has room, so both finish about together whether inputs or sessions dominate the log.
   */
  entry(seq: number, tx: Transaction, payload: Uint8Array): void {
    // read from shared memory: the worker's messages would wait for this thread's event loop
    const rederive = tx.kind === 'session' && tx.part === 1 && this.handed - Number(Atomics.load(this.progress, 0)) <= MAX_LAG;
    if (rederive) this.sessions.add(seq);
    this.handed = seq;
    // a copy (a Buffer's `slice` would be a view of the reader's buffer, which transferring detaches)
    const copy = new Uint8Array(payload);
    this.worker.postMessage({ type: 'entry', seq, payload: copy, rederive } satisfies ToWorker, [copy.buffer]);
  }

  /** Whether the main thread re-derives the session starting at `seq` (handed on already). */
  mainRederives(seq: number): boolean {
    return !this.sessions.has(seq);
  }

  /** Tells the worker the log ends here (it then finishes its share). */
  end(): void {
    this.post({ type: 'end' });
  }

  /** Awaits the worker's share (after `end`); the worker is then kept for the next audit. */
  async finish(): Promise<WorkerResult> {
    try {
      const result = await this.result;
      this.release();
      return result;
    } catch (err) {
      void this.worker.terminate();
      throw err;
    }
  }

  /** Abandons the audit: the worker stops reading and is ended. */
  abort(): void {
    if (!this.settled) this.post({ type: 'abort' });
    void this.worker.terminate();
  }

  private post(msg: ToWorker): void {
    this.worker.postMessage(msg);
  }

  private release(): void {
    if (idle !== null) {
      void this.worker.terminate();
      return;
    }
    this.worker.unref();
    idle = this.worker;
  }
}
