import type { Logger } from 'pino';

/**
 * Says at warn where a replica's start is once it has taken longer than `reportMs`, and again
 * every `reportMs` until it is done: a start that neither fails nor finishes is never silent (a
 * soak's restarted standby once waited 40 minutes without a line).
 */
export class StartupWatch {
  private current = 'connecting';
  private detail: () => Record<string, unknown> = () => ({});
  private readonly started = performance.now();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly log: Logger, reportMs: number) {
    this.timer = setInterval(() => this.report(), reportMs);
    this.timer.unref();
  }

  /** The step the start is in now, and what to say of its progress. */
  phase(name: string, detail: () => Record<string, unknown> = () => ({})): void {
    this.current = name;
    this.detail = detail;
  }

  /** The start finished (or failed): no more reports. */
  done(): void {
    clearInterval(this.timer);
  }

  private report(): void {
    this.log.warn({ phase: this.current, ms: Math.round(performance.now() - this.started), ...this.detail() }, 'still starting');
  }
}
