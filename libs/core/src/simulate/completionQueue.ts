/** A gang's members due to finish: the job, the session that committed it, and when (or one member due to fail then). */
export interface Completion {
  at: number;
  jobId: string;
  session: number;
  /** Insertion order: completions due at one time come out in the order their gangs committed. */
  order: number;
  /** A member's failure instead of the gang's end (contract v1.2): which member, its exit code, and the attempt. */
  fail?: { member: number; exitCode: number; attempt: number };
}

/** The members due to finish in a workload run, earliest first (a binary heap on time, then commit order). */
export class CompletionQueue {
  private readonly heap: Completion[] = [];
  private count = 0;

  /** Adds a gang whose members finish at `at` (or, with `fail`, one of whose members fails then). */
  push(at: number, jobId: string, session: number, fail?: Completion['fail']): void {
    const heap = this.heap;
    heap.push({ at, jobId, session, order: this.count++, ...(fail === undefined ? {} : { fail }) });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  /** The completion due first, or null when none is. */
  first(): Completion | null {
    return this.heap[0] ?? null;
  }

  /** Takes every completion due at or before `at`, in order. */
  takeUntil(at: number): Completion[] {
    const out: Completion[] = [];
    while (this.heap.length > 0 && this.heap[0]!.at <= at) out.push(this.pop());
    return out;
  }

  /** Takes the completion due first (there must be one). */
  pop(): Completion {
    const heap = this.heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && before(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    }
    return top;
  }
}

function before(a: Completion, b: Completion): boolean {
  return a.at < b.at || (a.at === b.at && a.order < b.order);
}
