import type { State, Transaction } from '@muster/core';
import type { AuditFindings } from './auditFindings.ts';
import type { Rederivation, Rederiver } from './rederiver.ts';

/** A session being checked, with its later parts still to come when it has more than one. */
interface OpenSession {
  session: number;
  parts: number;
  next: number;
  /** The re-derivation; null when the core threw (reported). */
  derived: Rederivation | null;
  /** The stamp of its first part, which the turn stamped every part with. */
  at: number;
  term: number;
  /** Whether every part so far is its re-derivation, at the sequence and with the stamp the turn gave it. */
  same: boolean;
}

/**
 * Checks a log's sessions: parts follow one another and agree on how many there are, and a
 * session this thread re-derives (the core's turn on the state before its first part) gives each
 * part's events.
 */
export class SessionCheck {
  private open: OpenSession | null = null;

  constructor(
    private readonly findings: AuditFindings,
    private readonly rederiver: Rederiver,
  ) {}

  /**
   * Checks what follows an unfinished session: its next part, or else a new leader's LeaderElected
   * (the old one died mid-session, and each part it wrote is consistent).
   */
  settle(seq: number, tx: Transaction): void {
    const open = this.open;
    if (open === null || (tx.kind === 'session' && tx.session === open.session && tx.part === open.next)) return;
    this.open = null;
    if (tx.kind === 'election') {
      this.findings.counts.sessionsCutShort++;
      return;
    }
    this.findings.fail(seq, 'session', `session ${open.session} stopped after part ${open.next - 1} of ${open.parts}, and transaction ${seq} (${tx.kind}) follows instead of part ${open.next} or a LeaderElected`);
  }

  /** Whether a session has parts still to come. */
  isOpen(): boolean {
    return this.open !== null;
  }

  /**
   * Checks session part `tx` against `state`, the state before it (a session is re-derived at its
   * first part); folding it is the caller's, unless this returns the state after it: the
   * re-derivation's, at its last part, when every part was its own.
   */
  part(seq: number, tx: Transaction, state: State): State | null {
    const open = this.open;
    let session: OpenSession;
    if (open !== null) {
      if (tx.parts !== open.parts) this.findings.fail(seq, 'session', `part ${tx.part} of session ${tx.session} announces ${tx.parts} parts, part 1 announced ${open.parts}`);
      session = open;
      open.next++;
      if (open.next > open.parts) this.open = null;
    } else if (tx.part !== 1) {
      this.findings.fail(seq, 'session', `transaction ${seq} is part ${tx.part} of session ${tx.session}, whose earlier parts are not before it`);
      return null;
    } else {
      this.findings.counts.sessions++;
      const derived = this.rederive(seq, tx, state);
      session = { session: tx.session, parts: tx.parts, next: 2, derived, at: tx.at, term: tx.term, same: true };
      if (tx.parts > 1) this.open = session;
    }
    const derived = session.derived;
    if (derived === null) return null;
    const k = tx.part - 1;
    const same = this.rederiver.divergences.compare(seq, tx, derived.parts[k] ?? [], 0, tx.events.length);
    session.same &&= same && derived.seqs[k] === seq && tx.at === session.at && tx.term === session.term;
    // the turn's state is the fold of all it wrote: the log's after this part when that was the last
    return session.same && tx.part === derived.parts.length ? derived.state : null;
  }

  /** Ends the log: a session still open was cut short by its end. */
  finish(): void {
    if (this.open !== null) this.findings.counts.sessionsCutShort++;
    this.open = null;
  }

  // decide reads the state as the leader had it: after the transaction before, before this one
  private rederive(seq: number, tx: Transaction, state: State): Rederivation | null {
    const started = performance.now();
    // with the time deadlines fell due by, as the leader wrote it (SessionStarted.dueBy)
    const first = tx.events[0];
    const dueBy = first?.type === 'SessionStarted' ? first.dueBy : undefined;
    const derived = this.rederiver.rederive(seq, state, tx, [dueBy === undefined ? { session: true } : { session: true, dueBy }]);
    this.findings.timings.decideMs += performance.now() - started;
    if (derived !== null && derived.parts.length !== tx.parts) this.findings.fail(seq, 'session', `session ${tx.session} announces ${tx.parts} part(s); re-deriving it gives ${derived.parts.length}`);
    return derived;
  }
}
