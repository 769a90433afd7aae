import type { AuditReport, JobStory, StateAt } from '@muster/auditor';
import { canonicalJson, shardEntriesSorted } from '@muster/core';
import type { SchedulerEvent } from '@muster/core';
import { renderTable } from '../format.ts';

/** Failures the summary lists (the JSON report has more). */
const SHOWN_FAILURES = 8;

/** The audit as a short table for people: what was checked, what failed, and the first divergence. */
export function renderAudit(r: AuditReport): string {
  const d = r.decisionsStream;
  const rows: string[][] = [
    ['hash chain', r.chain.ok ? 'ok' : `BROKEN at ${r.chain.brokenAt}`, `${r.transactions} transactions, ${r.events} events`],
    ['sessions', `${r.sessions} re-derived`, `${r.decisionsRederived} decisions equal; ${r.sessionsCutShort} cut short by a leader's death`],
    ['ingest', `${r.ingest.rederived} inputs re-derived`, `${r.ingest.structural} structure only; ${r.ingest.lost} never ingested`],
    ['events', `${r.eventsRederived} re-derived`, `${r.divergences} differ`],
    ['checkpoints', `${r.checkpoints.checked} checked`, `${r.checkpoints.failed} failed`],
    ['snapshots', `${r.snapshots.checked} checked`, `${r.snapshots.failed} failed${r.snapshots.skipped > 0 ? `; ${r.snapshots.skipped} of another schema` : ''}`],
    ['invariants', `${r.invariants.checked} transactions`, `${r.invariants.count} violations`],
    [
      'MUSTER_DECISIONS',
      d.available ? `${d.checked} messages equal` : 'not compared',
      d.available ? `${d.missing} missing, ${d.mismatched} mismatched, ${d.unexpected} unexpected, ${d.duplicated} duplicated; ${d.inFlight} in flight` : 'offline history',
    ],
  ];
  const range = r.lastSeq < r.fromSeq ? 'an empty range' : `sequences ${r.fromSeq}..${r.lastSeq}`;
  const time = `${r.ms} ms; re-deriving sessions ${r.timings.decideMs} ms, inputs ${r.timings.ingestMs} ms; state hashes ${r.timings.hashMs} ms`;
  const lines = [`audit of ${range}: ${r.clean ? 'CLEAN' : 'FAILED'} (${time})`, '', renderTable(['CHECK', 'RESULT', ''], rows), ''];
  lines.push(`state hash after ${r.lastSeq}: ${r.stateHash}`);
  for (const note of r.notes) lines.push(`note: ${note}`);
  if (r.failures.length > 0) {
    const shown = r.failures.slice(0, SHOWN_FAILURES);
    lines.push('', `first failures (${r.failureCount} in all${r.failureCount > shown.length ? '; --json lists more' : ''}):`);
    for (const f of shown) lines.push(`  ${String(f.seq).padStart(6)}  ${f.check.padEnd(16)} ${f.message}`);
  }
  if (r.divergence !== null) {
    const v = r.divergence;
    // both in canonical JSON (keys sorted), so that they line up
    lines.push('', `first divergence at sequence ${v.seq}, event ${v.index}${v.path === '' ? '' : `, field ${v.path}`}:`);
    lines.push(`  re-derived: ${v.expected === null ? '(nothing)' : canonicalJson(v.expected)}`);
    lines.push(`  in the log: ${v.actual === null ? '(nothing)' : canonicalJson(v.actual)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The state as of a sequence, for people: its stamp and hash, the nodes and the jobs. */
export function renderState(at: StateAt, hash: string): string {
  const s = at.state;
  const nodes = shardEntriesSorted(s.nodes).map(([id, n]) => [
    id,
    n.status,
    `${n.used.cpu}/${n.spec.capacity.cpu}`,
    `${n.used.memoryMb}/${n.spec.capacity.memoryMb}`,
    `${n.used.gpus}/${n.spec.gpus.length}`,
    Object.keys(n.jobs).sort().join(',') || '-',
  ]);
  const jobs = shardEntriesSorted(s.jobs).map(([id, j]) => [
    id,
    j.status,
    String(j.members.length),
    [...new Set(j.allocations.map((a) => a.node))].sort().join(',') || '-',
    j.pendReason === null ? '-' : `${j.pendReason.category}${j.pendReason.cached === true ? ' (cached)' : ''}`,
  ]);
  const lines = [
    `state as of sequence ${at.seq}: term ${s.term} (${s.leader ?? 'no leader'}), session ${s.session}, input ${s.lastInputSeq}, stamped ${new Date(s.lastAt).toISOString()}`,
    `state hash: ${hash}`,
    '',
    nodes.length === 0 ? 'no nodes' : renderTable(['NODE', 'STATUS', 'CPU', 'MEMORY MB', 'GPUS', 'JOBS'], nodes),
    '',
    jobs.length === 0 ? 'no jobs' : renderTable(['JOB', 'STATUS', 'MEMBERS', 'NODES', 'REASON'], jobs),
  ];
  return `${lines.join('\n')}\n`;
}

/** One job's story up to a sequence: every event about it, then where it stands. */
export function renderStory(story: JobStory): string {
  const rows = story.events.map((e) => [String(e.seq), String(e.index), e.kind, e.event.type, eventDetail(e.event)]);
  const job = story.job;
  const lines = [
    `job ${story.jobId} as of sequence ${story.seq}: ${job === null ? 'not known yet' : job.status}`,
    '',
    rows.length === 0 ? 'no events about it' : renderTable(['SEQ', '#', 'KIND', 'EVENT', 'DETAIL'], rows),
  ];
  return `${lines.join('\n')}\n`;
}

function eventDetail(e: SchedulerEvent): string {
  switch (e.type) {
    case 'JobSubmitted':
      return `input ${e.inputSeq}, user ${e.job.identity.user}`;
    case 'JobRejected':
    case 'InputRejected':
      return `${e.reason.category}: ${e.reason.message}`;
    case 'HostDebited':
    case 'DebitReversed':
    case 'AllocationReleased':
      return `${e.node} ${e.role}[${e.members.join(',')}]${e.gpuIds.length > 0 ? ` gpus ${e.gpuIds.join(',')}` : ''}`;
    case 'MemberBound':
      return `member ${e.member} on ${e.node}`;
    case 'GangCommitted':
      return `session ${e.session}: ${e.allocations.map((a) => `${a.node} ${a.role}[${a.members.join(',')}]`).join('; ')}`;
    case 'GangAborted':
      return `session ${e.session}${e.final ? ' final' : ''}: ${e.reason.category}${e.reason.cached === true ? ' (cached)' : ''}`;
    case 'TaskCompleted':
      return `member ${e.member} on ${e.nodeId} ${e.ok ? 'ok' : 'failed'}`;
    case 'JobFinished':
      return e.outcome;
    default:
      return '';
  }
}
