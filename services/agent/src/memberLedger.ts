import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { AgentError } from './agentError.ts';

/** What the agent knows about one member it ran: finished (and whether reported) or stopped. */
export interface LedgerEntry {
  /** The session of the bind the entry is about; a later bind (a new commit) runs the member again. */
  session: number;
  state: 'done' | 'stopped';
  /** The exit's outcome (for `done`). */
  ok?: boolean;
  /** The exit code, when the process exited (for `done`). */
  exitCode?: number;
  /** The signal that ended the process, when one did (for `done`). */
  signal?: string;
  /** The gang's attempt at the bind that started the member (for `done`). */
  attempt?: number;
  /** Whether the scheduler acknowledged the `done` input; an unreported one is sent again at start. */
  reported?: boolean;
  /** The `done` input's msg id, kept so that a resend is deduplicated. */
  msgId?: string;
}

/** A member's key in the ledger. */
export interface MemberKey {
  jobId: string;
  member: number;
}

interface LedgerFile {
  v: 1;
  members: Record<string, LedgerEntry>;
}

/**
 * The members a node's agent finished or stopped, kept in a small JSON file (or in memory) so that
 * an agent that restarts and re-reads its binds does not run a finished member again.
 */
export class MemberLedger {
  private readonly file: string | null;
  private readonly members: Record<string, LedgerEntry>;

  private constructor(file: string | null, members: Record<string, LedgerEntry>) {
    this.file = file;
    this.members = members;
  }

  /** Opens the ledger in `file` (created on first write), or an in-memory one for `null`; `BAD_LEDGER` if unreadable. */
  static open(file: string | null): MemberLedger {
    if (file === null) return new MemberLedger(null, {});
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return new MemberLedger(file, {});
    }
    let parsed: Partial<LedgerFile>;
    try {
      parsed = JSON.parse(text) as Partial<LedgerFile>;
    } catch (err) {
      throw new AgentError('BAD_LEDGER', `agent state file ${file} is not JSON; move it away to start afresh`, { cause: err });
    }
    return new MemberLedger(file, parsed.v === 1 && typeof parsed.members === 'object' ? { ...parsed.members } : {});
  }

  /** The entry of a member, if any. */
  get(key: MemberKey): LedgerEntry | undefined {
    return this.members[keyOf(key)];
  }

  /** Records an entry and writes the file (atomically, by rename). */
  set(key: MemberKey, entry: LedgerEntry): void {
    this.members[keyOf(key)] = entry;
    if (this.file === null) return;
    mkdirSync(dirname(this.file), { recursive: true });
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, JSON.stringify({ v: 1, members: this.members } satisfies LedgerFile));
    renameSync(tmp, this.file);
  }

  /** Finished members whose `done` input was not acknowledged yet. */
  unreported(): { key: MemberKey; entry: LedgerEntry }[] {
    return Object.entries(this.members)
      .filter(([, entry]) => entry.state === 'done' && entry.reported !== true)
      .map(([k, entry]) => ({ key: parseKey(k), entry }));
  }
}

function keyOf(key: MemberKey): string {
  return `${key.jobId}/${key.member}`;
}

function parseKey(k: string): MemberKey {
  const slash = k.lastIndexOf('/');
  return { jobId: k.slice(0, slash), member: Number(k.slice(slash + 1)) };
}
