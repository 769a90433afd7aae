import { Worker } from 'node:worker_threads';
import type { FromWorker, LaterRange, RangeResult } from './workerProtocol.ts';

// The worker's program: the built auditWorker.js beside this file; from the sources (vitest, tsx), a
// boot file that registers tsx in the thread first (a worker does not inherit module hooks).
const WORKER_ENTRY = new URL(import.meta.url.endsWith('.ts') ? './auditWorkerBoot.js' : './auditWorker.js', import.meta.url);

// A worker is kept for the next audit of the process once one is done (unreferenced: it never keeps
// the process alive), since starting one (a thread, the core and nats.js loaded again) costs more
// than a small audit could gain.
let idle: Worker | null = null;

/**
 * The size of MUSTER_LOG from which an audit splits the log in two ranges unless told otherwise
 * (see `AuditOptions.parallel`): a new worker runs its first audit cold (its own copy of the core,
 * not yet compiled), which cost ~1 s of CPU more than it saved on a 16 MB log in a fresh process.
 */
export const PARALLEL_LOG_BYTES = 64 * 1024 * 1024;

/** Whether an audit should split the log in two ranges when it can: asked to, or (by default) a worker is kept warm or the log is large. */
export function useWorker(parallel: boolean | undefined, logBytes: number | null): boolean {
  if (parallel !== undefined) return parallel;
  return (idle !== null && idle.threadId !== -1) || (logBytes ?? 0) >= PARALLEL_LOG_BYTES;
}

/** Where the last audit of this process split the log (null: it did not), whether its worker's range was taken, when the main thread reached the split and how long it then waited for the worker (ms) (for tests and benchmarks). */
export const lastSplit: { seq: number | null; taken: boolean; reachedMs: number; waitedMs: number } = { seq: null, taken: false, reachedMs: 0, waitedMs: 0 };

/**
 * Of the stored snapshots' sequences, the one to split the range `fromSeq`..`toSeq` at: nearest
 * its middle, with at least one transaction on each side; null when none is.
 */
export function splitPoint(snapshots: readonly number[], fromSeq: number, toSeq: number): number | null {
  const middle = (fromSeq + toSeq) / 2;
  let best: number | null = null;
  for (const seq of snapshots) {
    if (seq < fromSeq || seq >= toSeq) continue;
    if (best === null || Math.abs(seq - middle) < Math.abs(best - middle)) best = seq;
  }
  return best;
}

/**
 * The later range of a parallel audit, audited by a worker thread from a stored snapshot while the
 * main thread audits the log up to it; the main thread takes its result only once its own replay
 * reached the snapshot and hashed the same (else it audits the range itself).
 */
export class RangeShare {
  private readonly result: Promise<RangeResult>;
  private readonly started = performance.now();
  // stops listening to the worker (it may be kept for another audit)
  private detach: () => void = () => undefined;

  private constructor(
    private readonly worker: Worker,
    readonly range: LaterRange,
  ) {
    worker.ref();
    this.result = new Promise<RangeResult>((resolve, reject) => {
      const onMessage = (msg: FromWorker): void => {
        done();
        if (msg.type === 'result') resolve(msg.result);
        else reject(new Error(msg.message));
      };
      const onError = (err: Error): void => {
        done();
        reject(err);
      };
      const onExit = (code: number): void => {
        done();
        reject(new Error(`it stopped (exit code ${code})`));
      };
      const done = (this.detach = (): void => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      });
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
    });
    // a failure is awaited in `take`; until then its rejection must not go unhandled
    this.result.catch(() => undefined);
  }

  /** Starts the audit of `range` on a worker (a kept one, or a new one). */
  static start(range: LaterRange): RangeShare {
    // a kept worker that has died since (threadId -1) is replaced
    const worker = idle !== null && idle.threadId !== -1 ? idle : new Worker(WORKER_ENTRY);
    idle = null;
    // (the audit cleared the rest of lastSplit before it chose the range)
    lastSplit.seq = range.seq;
    const share = new RangeShare(worker, range);
    worker.postMessage({ type: 'start', range });
    return share;
  }

  /** The worker's findings, or why there are none (it failed: the main thread audits the range itself); the worker is then kept for the next audit. */
  async take(): Promise<RangeResult | { failed: string }> {
    const started = performance.now();
    try {
      const result = await this.result;
      Object.assign(lastSplit, { taken: true, reachedMs: started - this.started, waitedMs: performance.now() - started });
      this.release();
      return result;
    } catch (err) {
      void this.worker.terminate();
      return { failed: (err as Error).message };
    }
  }

  /** The range is not needed (the main thread audits it): the worker stops it and is kept. */
  abandon(): void {
    this.detach();
    this.worker.postMessage({ type: 'abort' });
    this.release();
  }

  /** The audit is abandoned: the worker is ended. */
  abort(): void {
    this.detach();
    void this.worker.terminate();
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
