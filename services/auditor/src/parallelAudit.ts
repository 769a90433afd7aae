import { Worker } from 'node:worker_threads';
import type { ConnectOptions } from '@muster/bus';
import type { HandedWork, Helper } from './helper.ts';
import { Shared } from './workerProtocol.ts';
import type { FromWorker, ToWorker, WorkerResult } from './workerProtocol.ts';

// The worker's program: the built auditWorker.js beside this file; from the sources (vitest, tsx), a
// boot file that registers tsx in the thread first (a worker does not inherit module hooks).
const WORKER_ENTRY = new URL(import.meta.url.endsWith('.ts') ? './auditWorkerBoot.js' : './auditWorker.js', import.meta.url);

// How many transactions the worker may be behind the main thread and still be handed work: it
// gets work only while it keeps up, so the main thread never waits long for it at the end, and a
// worker still starting (a cold one takes 0.3-0.6 s) gets none.
const MAX_LAG = 2;

// How many bytes of transactions may wait for the worker before the main thread waits for it: a
// worker still starting, or slower than the main thread, must not hold a long log in memory.
const MAX_QUEUED_BYTES = 64 * 1024 * 1024;
let maxQueuedBytes = MAX_QUEUED_BYTES;

/** Sets how many bytes may wait for the worker (tests; default 64 MiB). */
export function setMaxQueuedBytes(bytes = MAX_QUEUED_BYTES): void {
  maxQueuedBytes = bytes;
}

// A worker is kept for the next audit of the process once one is done (unreferenced: it never keeps
// the process alive), since starting one (a thread, tsx, the core loaded again) costs more than
// most audits it could help.
let idle: Worker | null = null;

/** The size of MUSTER_LOG from which an audit starts a worker of its own unless told otherwise (see `AuditOptions.parallel`). */
export const PARALLEL_LOG_BYTES = 64 * 1024 * 1024;

/** Whether an audit should run with a worker: asked to, or (by default) one is kept warm or the log is large. */
export function useWorker(parallel: boolean | undefined, logBytes: number | null): boolean {
  if (parallel !== undefined) return parallel;
  return (idle !== null && idle.threadId !== -1) || (logBytes ?? 0) >= PARALLEL_LOG_BYTES;
}

/** What the last parallel audit of this process handed to its worker (for tests and benchmarks). */
export const lastHanded = { sessions: 0, ingests: 0, transactions: 0 };

/**
 * The worker's share of one audit, as the main thread's auditor sees it (`Helper`): every
 * transaction is handed on (a copy of its bytes), re-derivations only while the worker keeps up.
 */
export class WorkerShare implements Helper {
  private readonly result: Promise<WorkerResult>;
  private readonly shared = new BigInt64Array(new SharedArrayBuffer(Shared.length * 8));
  private handedSeq = 0;
  // set once the worker answered or failed: nothing more to wait for
  private settled = false;
  // transactions handed on and not yet done by the worker: their sequences and sizes
  private readonly queued: { seq: number; bytes: number }[] = [];
  private queuedHead = 0;
  private queuedBytes = 0;
  private readonly handedCounts = { sessions: 0, ingests: 0, transactions: 0 };

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
  static start(fromSeq: number, decisions: ConnectOptions | null): WorkerShare {
    // a kept worker that has died since (threadId -1) is replaced
    const worker = idle !== null && idle.threadId !== -1 ? idle : new Worker(WORKER_ENTRY);
    idle = null;
    Object.assign(lastHanded, { sessions: 0, ingests: 0, transactions: 0 });
    const share = new WorkerShare(worker);
    share.post({ type: 'start', fromSeq, decisions, shared: share.shared.buffer as SharedArrayBuffer });
    return share;
  }

  /** Whether the worker is at most `MAX_LAG` transactions behind (read from shared memory: its messages would wait for this thread's event loop). */
  hasRoom(): boolean {
    return this.handedSeq - Number(Atomics.load(this.shared, Shared.done)) <= MAX_LAG;
  }

  /** Hands on one transaction as stored (the bytes are copied: the reader's buffer is not ours to give away). */
  hand(seq: number, payload: Uint8Array, work: HandedWork | null): void {
    this.handedSeq = seq;
    this.handedCounts.transactions++;
    if (work !== null) {
      Atomics.store(this.shared, Shared.lastWork, BigInt(seq));
      if (work.kind === 'session') this.handedCounts.sessions++;
      else this.handedCounts.ingests++;
    }
    this.queued.push({ seq, bytes: payload.length });
    this.queuedBytes += payload.length;
    // a copy (a Buffer's `slice` would be a view of the reader's buffer, which transferring detaches)
    const copy = new Uint8Array(payload);
    this.worker.postMessage({ type: 'entry', seq, payload: copy, work } satisfies ToWorker, [copy.buffer]);
  }

  /** Waits while more than `MAX_QUEUED_BYTES` of handed transactions wait for the worker (not for a failed one: `finish` says why). */
  async backpressure(): Promise<void> {
    while (!this.settled) {
      const done = Number(Atomics.load(this.shared, Shared.done));
      while (this.queuedHead < this.queued.length && this.queued[this.queuedHead]!.seq <= done) this.queuedBytes -= this.queued[this.queuedHead++]!.bytes;
      if (this.queuedHead > 1024 && this.queuedHead * 2 > this.queued.length) {
        this.queued.splice(0, this.queuedHead);
        this.queuedHead = 0;
      }
      if (this.queuedBytes <= maxQueuedBytes) return;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }

  /** Tells the worker everything is handed on: it finishes its work (skipping what needs only folding) and answers. */
  end(): void {
    Atomics.store(this.shared, Shared.ended, 1n);
    this.post({ type: 'end' });
  }

  /** Awaits the worker's share (after `end`); the worker is then kept for the next audit. */
  async finish(): Promise<WorkerResult> {
    try {
      const result = await this.result;
      Object.assign(lastHanded, this.handedCounts);
      this.release();
      return result;
    } catch (err) {
      void this.worker.terminate();
      throw err;
    }
  }

  /** Abandons the audit: the worker is ended. */
  abort(): void {
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
