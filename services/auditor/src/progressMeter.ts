import type { AuditProgress } from './auditReport.ts';

/** How often progress is reported, at most. */
const EVERY_MS = 200;

/** Turns the sequences an audit reaches into a few progress reports a second, with rate and ETA. */
export class ProgressMeter {
  private readonly started = performance.now();
  private lastReport = this.started;
  private firstSeq: number | null = null;

  constructor(
    private readonly lastSeq: number,
    private readonly report: (p: AuditProgress) => void,
  ) {}

  /** One more transaction done. */
  tick(seq: number): void {
    this.firstSeq ??= seq;
    if ((seq & 31) !== 0) return;
    const now = performance.now();
    if (now - this.lastReport < EVERY_MS) return;
    this.lastReport = now;
    this.report(this.progress(seq, now));
  }

  /** The final report. */
  done(seq: number): void {
    this.report({ ...this.progress(seq, performance.now()), etaMs: 0 });
  }

  private progress(seq: number, now: number): AuditProgress {
    const seconds = (now - this.started) / 1000;
    const txPerSec = seconds > 0 ? (seq - (this.firstSeq ?? seq) + 1) / seconds : 0;
    const lastSeq = Math.max(this.lastSeq, seq);
    return { seq, lastSeq, txPerSec: Math.round(txPerSec), etaMs: txPerSec > 0 ? Math.round(((lastSeq - seq) / txPerSec) * 1000) : 0 };
  }
}
