// The worker of a parallel audit (see parallelAudit.ts): it audits the later range of the log, from
// the state of the stored snapshot the range starts at, with a connection of its own (MUSTER_LOG
// from the snapshot's transaction on, MUSTER_IN from the input after the snapshot's last,
// MUSTER_DECISIONS for the range), while the main thread audits the log up to that snapshot.
import { parentPort } from 'node:worker_threads';
import { connect, loadSnapshot, pullDecisionBatches, pullInputBatches, pullLogEntries } from '@muster/bus';
import type { Bus } from '@muster/bus';
import type { State } from '@muster/core';
import { DecisionsCheck } from './decisionsCheck.ts';
import { LogAuditor } from './logAuditor.ts';
import { replayEntries } from './replayEntries.ts';
import type { FromWorker, LaterRange, RangeResult, ToWorker } from './workerProtocol.ts';

const port = parentPort;
if (port === null) throw new Error('auditWorker.ts runs as a worker thread');

/** One range's audit, from `start` to its result. */
class RangeRun {
  private aborted = false;
  private readonly stop = new AbortController();

  constructor(private readonly range: LaterRange) {
    this.run().then(
      (result) => {
        if (!this.aborted) post({ type: 'result', result });
      },
      (err: unknown) => {
        if (!this.aborted) post({ type: 'error', message: err instanceof Error ? err.message : String(err) });
      },
    );
  }

  abort(): void {
    this.aborted = true;
    this.stop.abort();
  }

  private async run(): Promise<RangeResult> {
    const c = this.range.connection;
    // the caller's servers, credentials and timeouts, under a name of the worker's own
    const bus = await connect({ ...c, name: 'muster-audit-worker', connectTimeoutMs: c.connectTimeoutMs ?? c.timeoutMs ?? 5_000, maxReconnectAttempts: 3 });
    try {
      return await this.audit(bus);
    } finally {
      this.stop.abort();
      await bus.close().catch(() => undefined);
    }
  }

  private async audit(bus: Bus): Promise<RangeResult> {
    const { seq, toSeq } = this.range;
    const signal = this.stop.signal;
    // the snapshot's bytes are hashed against its record here; the main thread compares the record with its replay
    const snapshot = await loadSnapshot<State>(bus, this.range.snapshot);
    if (snapshot.seq !== seq || snapshot.state.seq !== seq) throw new Error(`snapshot ${this.range.snapshot} is at ${snapshot.seq} (its state at ${snapshot.state.seq}), not at ${seq}`);
    const entries = pullLogEntries(bus, { fromSeq: seq, signal })[Symbol.asyncIterator]();
    const first = await entries.next();
    if (first.done === true || first.value.seq !== seq) throw new Error(`MUSTER_LOG no longer holds transaction ${seq}`);
    const decisions = new DecisionsCheck(seq + 1, (f) => auditor.fail(f.seq, f.check, f.message), false);
    const auditor = new LogAuditor({
      start: { state: snapshot.state, seq, tx: first.value.tx, payload: first.value.payload },
      fromSeq: seq + 1,
      openInputs: (fromSeq) => pullInputBatches(bus, { fromSeq, signal }),
      snapshots: new Set(this.range.snapshots),
      decisions,
    });
    const reading = (async () => {
      for await (const batch of pullDecisionBatches(bus, { signal, withBytes: true })) for (const m of batch) decisions.fromStream(m);
    })();
    // a reader that fails is awaited below; until then its rejection must not go unhandled
    reading.catch(() => undefined);
    const rest = { [Symbol.asyncIterator]: () => entries };
    const end = await replayEntries(auditor, rest, toSeq, () => this.aborted);
    await auditor.finish();
    if (this.aborted) throw new Error('aborted');
    await reading;
    const decisionsStream = decisions.finish(auditor.lastSeq);
    const stateHash = auditor.hash();
    return {
      counts: auditor.counts,
      failures: auditor.failures.list(),
      failureCount: auditor.failures.count,
      divergence: auditor.divergences.first,
      invariants: { checked: auditor.invariants.checked, count: auditor.invariants.count, violations: auditor.invariants.violations },
      chainBreak: auditor.chainBreak,
      deferredCheckpoints: auditor.deferredCheckpoints(),
      lastSeq: auditor.lastSeq,
      readFailed: end === 'failed',
      snapshotHashes: auditor.snapshotHashList(),
      stateHash,
      decisionsStream,
      timings: { ...auditor.timings },
    };
  }
}

function post(msg: FromWorker): void {
  port!.postMessage(msg);
}

let current: RangeRun | null = null;
port.on('message', (msg: ToWorker) => {
  current?.abort();
  current = msg.type === 'start' ? new RangeRun(msg.range) : null;
});
