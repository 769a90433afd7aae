import type { SchedulerEvent, State, Transaction } from '@muster/core';
import type { AuditFindings } from './auditFindings.ts';
import type { Helper } from './helper.ts';
import type { Rederiver } from './rederiver.ts';

/** A session whose later parts are still to come. */
interface OpenSession {
  session: number;
  parts: number;
  next: number;
  /** The re-derived parts; null when another thread re-derives this session. */
  derived: SchedulerEvent[][] | null;
}

/**
 * Checks a log's sessions: parts follow one another and agree on how many there are, and a
 * session this thread re-derives (the core's turn on the state before its first part) gives each
 * part's events.
 */
export class SessionCheck {
  private open: OpenSession | null = null;

  /** `reportsStructure`: false for a helper, whose main thread reports (and counts) the structure of sessions. */
  constructor(
    private readonly findings: AuditFindings,
    private readonly rederiver: Rederiver,
    private readonly reportsStructure: boolean,
  ) {}

  /**
   * Checks what follows an unfinished session: its next part, or else a new leader's LeaderElected
   * (the old one died mid-session, and each part it wrote is consistent).
   */
  settle(seq: number, tx: Transaction): void {
    const open = this.open;
    if (open === null || (tx.kind === 'session' && tx.session === open.session && tx.part === open.next)) return;
    this.open = null;
    if (!this.reportsStructure) return;
    if (tx.kind === 'election') {
      this.findings.counts.sessionsCutShort++;
      return;
    }
    this.findings.fail(seq, 'session', `session ${open.session} stopped after part ${open.next - 1} of ${open.parts}, and transaction ${seq} (${tx.kind}) follows instead of part ${open.next} or a LeaderElected`);
  }

  /** Whether `helper` takes session part `tx` over (after `settle`): a new session when it has room, or the rest of one it took. */
  handsTo(helper: Helper, tx: Transaction): boolean {
    return this.open === null ? tx.part === 1 && helper.hasRoom() : this.open.derived === null;
  }

  /** Checks session part `tx` against `state`, the state before it (`derive`: whether this thread re-derives the session, if `tx` starts one); folding it is the caller's. */
  part(seq: number, tx: Transaction, state: State, derive: boolean): void {
    const open = this.open;
    // the structure of sessions is checked (and counted) by the thread that checks everything else
    const structure = this.reportsStructure;
    let derived: SchedulerEvent[] | null;
    if (open !== null) {
      if (structure && tx.parts !== open.parts) this.findings.fail(seq, 'session', `part ${tx.part} of session ${tx.session} announces ${tx.parts} parts, part 1 announced ${open.parts}`);
      derived = open.derived === null ? null : (open.derived[tx.part - 1] ?? []);
      open.next++;
      if (open.next > open.parts) this.open = null;
    } else if (tx.part !== 1) {
      if (structure) this.findings.fail(seq, 'session', `transaction ${seq} is part ${tx.part} of session ${tx.session}, whose earlier parts are not before it`);
      return;
    } else {
      if (structure) this.findings.counts.sessions++;
      const parts = derive ? this.rederive(seq, tx, state) : null;
      derived = parts === null ? null : (parts[0] ?? []);
      if (tx.parts > 1) this.open = { session: tx.session, parts: tx.parts, next: 2, derived: parts };
    }
    if (derived !== null) this.rederiver.divergences.compare(seq, tx, derived, 0, tx.events.length);
  }

  /** Ends the log: a session still open was cut short by its end. */
  finish(): void {
    if (this.open !== null && this.reportsStructure) this.findings.counts.sessionsCutShort++;
    this.open = null;
  }

  // decide reads the state as the leader had it: after the transaction before, before this one
  private rederive(seq: number, tx: Transaction, state: State): SchedulerEvent[][] | null {
    const started = performance.now();
    // with the time deadlines fell due by, as the leader wrote it (SessionStarted.dueBy)
    const first = tx.events[0];
    const dueBy = first?.type === 'SessionStarted' ? first.dueBy : undefined;
    const parts = this.rederiver.parts(seq, state, tx, [dueBy === undefined ? { session: true } : { session: true, dueBy }]);
    this.findings.timings.decideMs += performance.now() - started;
    if (parts !== null && parts.length !== tx.parts) this.findings.fail(seq, 'session', `session ${tx.session} announces ${tx.parts} part(s); re-deriving it gives ${parts.length}`);
    return parts;
  }
}
