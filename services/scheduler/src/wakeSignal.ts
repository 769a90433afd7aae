/** A level-triggered wake-up: `notify` makes the current or next `wait` return at once. */
export class WakeSignal {
  private pending = false;
  private resolve: (() => void) | null = null;

  /** Wakes the waiter (or the next one). */
  notify(): void {
    this.pending = true;
    this.resolve?.();
  }

  /** Waits for a notify or for `ms`, whichever is first. */
  async wait(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.resolve?.(), Math.max(0, ms));
      this.resolve = () => {
        clearTimeout(timer);
        this.resolve = null;
        resolve();
      };
    });
    this.pending = false;
  }
}
