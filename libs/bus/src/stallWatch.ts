// how often a watch looks; a look that comes later than twice this found the thread busy
const TICK_MS = 1_000;

/**
 * Calls `onStall` once when nothing was heard (`heard`) for `ms` while `waiting()` says an answer
 * is due: a read whose consumer was lost (with a NATS node that restarted, reaped by the server,
 * or its messages lost with a connection the server cut) is otherwise waited on for ever. Only time
 * this thread was free to hear counts: after a look that came late (the caller busy for seconds,
 * the answers waiting in the socket) the wait starts again.
 */
export class StallWatch {
  private last = Date.now();
  private looked = Date.now();
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly ms: number,
    onStall: () => void,
    waiting: () => boolean = () => true,
  ) {
    this.timer = setInterval(() => {
      const now = Date.now();
      if (now - this.looked > 2 * TICK_MS) this.last = now;
      this.looked = now;
      if (!waiting() || now - this.last <= this.ms) return;
      this.stop();
      onStall();
    }, TICK_MS);
  }

  /** Something arrived (or a new wait began): the stall is counted from now. */
  heard(): void {
    this.last = Date.now();
  }

  /** Ends the watch. */
  stop(): void {
    clearInterval(this.timer);
  }
}
