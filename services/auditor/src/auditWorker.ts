// The worker of a parallel audit (see parallelAudit.ts): with a NATS connection of its own it reads
// MUSTER_IN and MUSTER_DECISIONS, folds the transactions of MUSTER_LOG that the main thread hands
// it (the bytes it read), re-derives every input and compares every decision message, while the
// main thread folds the same log and makes every other check.
import { parentPort } from 'node:worker_threads';
import { connect, jetStream, readDecisionBatches, readInputBatches } from '@muster/bus';
import type { Transaction } from '@muster/core';
import { DecisionsCheck } from './decisionsCheck.ts';
import { LogAuditor } from './logAuditor.ts';
import type { FromWorker, ToWorker, WorkerResult } from './workerProtocol.ts';

const port = parentPort;
if (port === null) throw new Error('auditWorker.ts runs as a worker thread');

const decoder = new TextDecoder();

class Aborted extends Error {}

interface Entry {
  seq: number;
  payload: Uint8Array;
  rederive: boolean;
}

/** One audit's share, from `start` to `end`. */
class WorkerRun {
  private readonly queue: (Entry | null)[] = [];
  private head = 0;
  private wake: (() => void) | null = null;
  private readonly stop = new AbortController();

  constructor(start: Extract<ToWorker, { type: 'start' }>) {
    this.run(start).then(
      (result) => post({ type: 'result', result }),
      (err: unknown) => {
        if (!(err instanceof Aborted)) post({ type: 'error', message: err instanceof Error ? err.message : String(err) });
      },
    );
  }

  push(entry: Entry | null): void {
    this.queue.push(entry);
    this.signal();
  }

  abort(): void {
    this.stop.abort();
    this.signal();
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private async next(): Promise<Entry | null> {
    while (this.head === this.queue.length) {
      if (this.stop.signal.aborted) throw new Aborted();
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    if (this.stop.signal.aborted) throw new Aborted();
    const entry = this.queue[this.head]!;
    this.queue[this.head++] = null;
    return entry;
  }

  private async run(start: Extract<ToWorker, { type: 'start' }>): Promise<WorkerResult> {
    const started = performance.now();
    const c = start.connection;
    const nc = await connect({
      servers: c.servers,
      name: 'muster-audit-worker',
      connectTimeoutMs: c.timeoutMs,
      maxReconnectAttempts: 3,
      ...(c.user === undefined ? {} : { user: c.user }),
      ...(c.pass === undefined ? {} : { pass: c.pass }),
      ...(c.token === undefined ? {} : { token: c.token }),
      ...(c.inboxPrefix === undefined ? {} : { inboxPrefix: c.inboxPrefix }),
    });
    try {
      const js = jetStream(nc, { timeoutMs: c.timeoutMs });
      const decisions: DecisionsCheck | null = start.decisions ? new DecisionsCheck(start.fromSeq, (f) => auditor.fail(f.seq, f.check, f.message)) : null;
      const auditor: LogAuditor = new LogAuditor({
        part: 'ingest',
        rederives: () => rederive,
        fromSeq: start.fromSeq,
        openInputs: (fromSeq) => readInputBatches(js, { fromSeq, withMsgId: false, signal: this.stop.signal }),
        snapshots: new Map(),
        decisions,
      });
      const reading = decisions === null ? Promise.resolve() : (async () => {
        for await (const batch of readDecisionBatches(js, { signal: this.stop.signal })) for (const m of batch) decisions.fromStream(m);
      })();
      // a reader that fails is awaited below; until then its rejection must not go unhandled
      reading.catch(() => undefined);
      const progress = new BigInt64Array(start.progress);
      let waitedMs = 0;
      // whether the session the current transaction starts is this worker's to re-derive
      let rederive = false;
      for (;;) {
        const waitFrom = performance.now();
        const entry = await this.next();
        waitedMs += performance.now() - waitFrom;
        if (entry === null) break;
        // the main thread parsed these very bytes as a transaction before handing them on
        const tx = JSON.parse(decoder.decode(entry.payload)) as Transaction;
        rederive = entry.rederive;
        await auditor.transaction(entry.seq, tx);
        Atomics.store(progress, 0, BigInt(entry.seq));
      }
      await auditor.finish();
      await reading;
      const decisionsStream = decisions?.finish(auditor.lastSeq) ?? null;
      return {
        counts: auditor.counts,
        failures: auditor.failures.list(),
        failureCount: auditor.failures.count,
        divergence: auditor.divergence,
        decisionsStream,
        ingestMs: auditor.timings.ingestMs,
        decideMs: auditor.timings.decideMs,
        busyMs: performance.now() - started - waitedMs,
      };
    } finally {
      this.stop.abort();
      await nc.close().catch(() => undefined);
    }
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
      current?.push({ seq: msg.seq, payload: msg.payload, rederive: msg.rederive });
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
