/** A binary min-heap under an order given as `before(a, b)` (a comes first); the order must not change while an item sits in it. */
export class BinaryHeap<T> {
  private readonly heap: T[] = [];

  constructor(private readonly before: (a: T, b: T) => boolean) {}

  /** The items held, in no particular order. */
  get items(): readonly T[] {
    return this.heap;
  }

  /** The first item, left in (undefined when empty). */
  peek(): T | undefined {
    return this.heap[0];
  }

  /** Adds an item. */
  push(item: T): void {
    const heap = this.heap;
    let i = heap.push(item) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  /** Takes out the first item (undefined when empty). */
  pop(): T | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length === 0 || last === undefined) return top;
    heap[0] = last;
    this.siftDown(0);
    return top;
  }

  /** Restores the order after the items' keys changed (any of them may have). */
  reorder(): void {
    for (let i = (this.heap.length >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  private siftDown(start: number): void {
    const heap = this.heap;
    let i = start;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= heap.length) break;
      const r = l + 1;
      const m = r < heap.length && this.before(heap[r]!, heap[l]!) ? r : l;
      if (!this.before(heap[m]!, heap[i]!)) break;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  }
}
