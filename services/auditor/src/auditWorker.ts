// The worker of a parallel audit (see parallelAudit.ts): it folds the transactions of MUSTER_LOG
// the main thread hands it (the very bytes the main thread read) and makes the re-derivations
// handed with them (sessions by `decide`, inputs by `ingest`), and, given a connection, reads
// MUSTER_DECISIONS and compares it with the log, while the main thread folds the same log and
// makes every other check.
import { parentPort } from 'node:worker_threads';
import { connect, pullDecisionBatches } from '@muster/bus';
import type { Bus } from '@muster/bus';
import type { Transaction } from '@muster/core';
import { DecisionsCheck } from './decisionsCheck.ts';
import { LogAuditor } from './logAuditor.ts';
import { Shared } from './workerProtocol.ts';
import type { FromWorker, ToWorker, WorkerResult } from './workerProtocol.ts';

const port = parentPort;
if (port === null) throw new Error('auditWorker.ts runs as a worker thread');

const decoder = new TextDecoder();

type Entry = Extract<ToWorker, { type: 'entry' }>;

/** One audit's share, from `start` to `end`. */
class WorkerRun {
  private readonly queue: (Entry | null)[] = [];
  private head = 0;
  private wake: (() => void) | null = null;
  private aborted = false;
  private readonly shared: BigInt64Array;
  private readonly auditor: LogAuditor;
  private readonly decisions: DecisionsCheck | null;
  private readonly stop = new AbortController();

  constructor(private readonly start: Extract<ToWorker, { type: 'start' }>) {
    this.shared = new BigInt64Array(start.shared);
    this.decisions = start.decisions === null ? null : new DecisionsCheck(start.fromSeq, (f) => this.auditor.fail(f.seq, f.check, f.message));
    this.auditor = new LogAuditor({ fromSeq: start.fromSeq, openInputs: null, snapshots: new Set(), decisions: this.decisions }, true);
    this.run().then(
      (result) => {
        if (!this.aborted) post({ type: 'result', result });
      },
      (err: unknown) => {
        if (!this.aborted) post({ type: 'error', message: err instanceof Error ? err.message : String(err) });
      },
    );
  }

  push(entry: Entry | null): void {
    this.queue.push(entry);
    this.signal();
  }

  abort(): void {
    this.aborted = true;
    this.stop.abort();
    this.push(null);
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  // Once the main thread has handed on everything, what is left after the last work handed on
  // needs only folding, which nobody reads: the worker stops there (unless it compares decisions).
  private finished(done: number): boolean {
    return this.decisions === null && Atomics.load(this.shared, Shared.ended) === 1n && done >= Number(Atomics.load(this.shared, Shared.lastWork));
  }

  private async run(): Promise<WorkerResult> {
    const c = this.start.decisions;
    // the caller's servers, credentials and timeouts, under a name of the worker's own
    const bus = c === null ? null : await connect({ ...c, name: 'muster-audit-worker', connectTimeoutMs: c.connectTimeoutMs ?? c.timeoutMs ?? 5_000, maxReconnectAttempts: 3 });
    try {
      return await this.check(bus);
    } finally {
      this.stop.abort();
      await bus?.close().catch(() => undefined);
    }
  }

  private async check(bus: Bus | null): Promise<WorkerResult> {
    const auditor = this.auditor;
    const decisions = this.decisions;
    const reading = bus === null || decisions === null ? Promise.resolve() : (async () => {
      for await (const batch of pullDecisionBatches(bus, { signal: this.stop.signal })) for (const m of batch) decisions.fromStream(m);
    })();
    // a reader that fails is awaited below; until then its rejection must not go unhandled
    reading.catch(() => undefined);
    for (;;) {
      if (this.aborted || this.finished(auditor.lastSeq)) break;
      while (this.head === this.queue.length) await new Promise<void>((resolve) => (this.wake = resolve));
      const entry = this.queue[this.head];
      this.queue[this.head++] = null;
      if (entry === null || entry === undefined) break;
      // the main thread parsed these very bytes as a transaction before handing them on
      const tx = JSON.parse(decoder.decode(entry.payload)) as Transaction;
      auditor.handed(entry.seq, tx, entry.work);
      Atomics.store(this.shared, Shared.done, BigInt(entry.seq));
    }
    await auditor.finish();
    await reading;
    const decisionsStream = decisions?.finish(auditor.lastSeq) ?? null;
    return {
      counts: auditor.counts,
      failures: auditor.failures.list(),
      failureCount: auditor.failures.count,
      divergence: auditor.divergences.first,
      decisionsStream,
      decideMs: auditor.timings.decideMs,
      ingestMs: auditor.timings.ingestMs,
    };
  }
}

function post(msg: FromWorker): void {
  port!.postMessage(msg);
}

let current: WorkerRun | null = null;
port.on('message', (msg: ToWorker) => {
  switch (msg.type) {
    case 'start':
      current?.abort();
      current = new WorkerRun(msg);
      break;
    case 'entry':
      current?.push(msg);
      break;
    case 'end':
      current?.push(null);
      current = null;
      break;
    case 'abort':
      current?.abort();
      current = null;
      break;
  }
});
