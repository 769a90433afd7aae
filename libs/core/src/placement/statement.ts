import type { DebitReversed, HostDebited } from '../events.ts';
import type { Resources } from '../resources.ts';
import type { HostIndex, IndexUndo } from './hostIndex.ts';
import { deviceDomain } from './pickGpus.ts';

/** A debit of the current attempt that is still held (not reversed). */
export interface LiveDebit {
  host: number;
  event: HostDebited;
  undo: IndexUndo;
  /** GPU devices per member of the bucket (members take consecutive runs of `event.gpuIds`). */
  gpusPerMember: number;
  /** Compact NVLink domain the debit pinned on its host (-1: none). */
  domain: number;
}

/**
 * One gang attempt as a Statement (Volcano's word): tentative debits on the session's host index,
 * recorded as `HostDebited`/`DebitReversed` events in the order they happen. A plan that fails is
 * reversed exactly (the same resources and device ids) before the next; the whole statement
 * either commits (its events are written) or is discarded (the index is restored, nothing written).
 */
export class Statement {
  /** Every debit and reversal, in order. */
  readonly events: (HostDebited | DebitReversed)[] = [];
  private readonly live: LiveDebit[] = [];
  private readonly pins = new Map<number, { domain: number; refs: number }>();
  // the device list of every debit without devices: one per gang (events' values are never mutated)
  private readonly noDevices: number[] = [];

  constructor(private readonly index: HostIndex, readonly jobId: string) {}

  /** Debits still held. */
  get held(): readonly LiveDebit[] {
    return this.live;
  }

  /** Whether any NVLink domain is pinned (then a failed search says nothing about the clean cluster). */
  get pinned(): boolean {
    return this.pins.size > 0;
  }

  /** The domain the gang's GPUs on host `h` must come from under gpuLocality (-1: any). */
  pinOf(h: number): number {
    return this.pins.get(h)?.domain ?? -1;
  }

  /** Claims a bucket on host `h`: debits the index and records `HostDebited`. */
  debit(h: number, role: string, members: number[], resources: Resources, gpuIndices: readonly number[], gpusPerMember: number, locality: boolean): void {
    const c = this.index.classes[this.index.cls[h]!]!;
    const undo = this.index.debit(h, resources.cpu, resources.memoryMb, resources.slots, gpuIndices);
    const event: HostDebited = {
      type: 'HostDebited',
      jobId: this.jobId,
      node: this.index.ids[h]!,
      role,
      members,
      resources,
      gpuIds: gpuIndices.length === 0 ? this.noDevices : gpuIndices.map((g) => c.gpuIds[g]!),
    };
    let domain = -1;
    if (locality && gpuIndices.length > 0) {
      // the gang's GPUs on one host stay in one domain: later roles on this host must use it too
      domain = deviceDomain(this.index, h, gpuIndices[0]!);
      const pin = this.pins.get(h);
      if (pin === undefined) this.pins.set(h, { domain, refs: 1 });
      else pin.refs++;
    }
    this.events.push(event);
    this.live.push({ host: h, event, undo, gpusPerMember, domain });
  }

  /** How many debits are held now (a mark to reverse back to). */
  mark(): number {
    return this.live.length;
  }

  /** Reverses every debit made after `mark`, last first, recording a `DebitReversed` for each. */
  reverseTo(mark: number): void {
    const own = this.index.deferTrees();
    while (this.live.length > mark) {
      const d = this.undoLast();
      this.events.push({ ...d.event, type: 'DebitReversed' });
    }
    if (own) this.index.flushTrees();
  }

  /** Restores the index as it was before the attempt; the statement's events are not written. */
  discard(): void {
    const own = this.index.deferTrees();
    while (this.live.length > 0) this.undoLast();
    if (own) this.index.flushTrees();
  }

  private undoLast(): LiveDebit {
    const d = this.live.pop()!;
    this.index.restore(d.undo);
    if (d.domain >= 0) {
      const pin = this.pins.get(d.host)!;
      if (--pin.refs === 0) this.pins.delete(d.host);
    }
    return d;
  }
}
