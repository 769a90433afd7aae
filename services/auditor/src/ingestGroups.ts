import type { Input, SchedulerEvent, Transaction } from '@muster/core';
import type { AuditFindings } from './auditFindings.ts';
import { InputCursor } from './inputCursor.ts';

/** The events of one input in an ingest transaction (`from`..`to`), and the input (null: not available). */
export interface IngestGroup {
  from: number;
  to: number;
  input: Input | null;
}

/**
 * Reads MUSTER_IN in step with the log's ingest transactions and groups each one's events by the
 * input they ingest, checking that each input is ingested once, in order, and none is passed over.
 */
export class IngestGroups {
  private cursor: InputCursor | null = null;

  /** `openInputs`: opens the inputs from a MUSTER_IN sequence on (in batches), or null when no inputs are available. */
  constructor(
    private readonly openInputs: ((fromSeq: number) => AsyncIterator<readonly Input[]>) | null,
    private readonly findings: AuditFindings,
  ) {}

  /** The groups of ingest transaction `seq`, whose log had ingested inputs up to `lastInputSeq` before it. */
  async of(seq: number, tx: Transaction, lastInputSeq: number): Promise<IngestGroup[]> {
    const events = tx.events;
    // the inputs are read first (reading MUSTER_IN is asynchronous; one await for the whole
    // transaction), so that the transaction is then re-derived in one synchronous run
    await this.readUpTo(lastInputSeqOf(events), lastInputSeq);
    const groups: IngestGroup[] = [];
    let last = lastInputSeq;
    let i = 0;
    while (i < events.length) {
      const inputSeq = inputSeqOf(events[i]!);
      if (inputSeq === null) {
        this.findings.fail(seq, 'structure', `event ${i} (${events[i]!.type}) of ingest transaction ${seq} names no input, yet no earlier event of its input precedes it`);
        groups.push({ from: i, to: events.length, input: null });
        break;
      }
      // an input's events: the one that names it, then its consequences (which name none)
      let to = i + 1;
      while (to < events.length && inputSeqOf(events[to]!) === null) to++;
      let input: Input | null = null;
      if (inputSeq <= last) {
        this.findings.fail(seq, 'exactly-once', `transaction ${seq} ingests input ${inputSeq}, but the log had already ingested up to input ${last}`);
      } else {
        input = this.take(seq, inputSeq);
        last = inputSeq;
      }
      if (input === null) this.findings.counts.inputsStructural++;
      else this.findings.counts.inputsRederived++;
      groups.push({ from: i, to, input });
      i = to;
    }
    return groups;
  }

  /** Stops reading inputs. */
  async close(): Promise<void> {
    await this.cursor?.close();
  }

  /** Has the inputs up to MUSTER_IN sequence `last` in hand (no-op without inputs, or when none is new after `ingested`). */
  private async readUpTo(last: number, ingested: number): Promise<void> {
    const open = this.openInputs;
    if (open === null || last <= ingested) return;
    this.cursor ??= new InputCursor(open(ingested + 1));
    await this.cursor.reach(last);
  }

  private take(seq: number, inputSeq: number): Input | null {
    if (this.cursor === null) return null;
    const { input, passed } = this.cursor.take(inputSeq);
    for (const p of passed) {
      this.findings.counts.inputsLost++;
      this.findings.fail(seq, 'exactly-once', `input ${p.seq} (${p.subject}) is on MUSTER_IN but the log never ingested it; transaction ${seq} goes on to input ${inputSeq}`);
    }
    return input;
  }
}

/** The highest input sequence the events name (0 when none). */
function lastInputSeqOf(events: readonly SchedulerEvent[]): number {
  let last = 0;
  for (const event of events) {
    const inputSeq = inputSeqOf(event);
    if (inputSeq !== null && inputSeq > last) last = inputSeq;
  }
  return last;
}

function inputSeqOf(event: SchedulerEvent): number | null {
  return 'inputSeq' in event && typeof event.inputSeq === 'number' ? event.inputSeq : null;
}
