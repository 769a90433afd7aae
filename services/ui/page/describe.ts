import type { LogEvent } from './types.ts';

/** One line about a log event, for the feed and a job's story (`placed on sim-1 task[0,1]`). */
export function describe(event: LogEvent): string {
  const e = event as Record<string, unknown> & { type: string };
  switch (e.type) {
    case 'JobSubmitted': {
      const job = e.job as { identity?: { user?: string; queue?: string }; priority?: number };
      return `submitted by ${job.identity?.user ?? '?'} to ${job.identity?.queue ?? '?'} (priority ${job.priority ?? 0})`;
    }
    case 'GangCommitted': {
      const allocations = (e.allocations as { node: string; role: string; members: number[]; gpuIds: number[] }[]) ?? [];
      return `placed on ${allocations.map((a) => `${a.node} ${a.role}[${a.members.join(',')}]${a.gpuIds.length > 0 ? ` gpus ${a.gpuIds.join(',')}` : ''}`).join('; ')}`;
    }
    case 'GangAborted': {
      const reason = e.reason as { category: string; message: string; cached?: boolean; by?: string };
      // a victim of preemption is requeued: say by whom (DESIGN.md §12)
      if (reason.category === 'preempted') return `preempted by ${reason.by ?? '?'}, requeued — ${reason.message}`;
      return `${e.final === true ? 'aborted' : 'waits'}: ${reason.category}${reason.cached === true ? ' (cached)' : ''} — ${reason.message}`;
    }
    case 'GangResized': {
      // an elastic gang (DESIGN.md §13): grown toward its full size, or shrunk by a preemptor
      const size = `${String(e.members)} member${e.members === 1 ? '' : 's'}`;
      return typeof e.by === 'string' ? `shrunk to ${size} by ${e.by}` : `grew to ${size}`;
    }
    case 'GangReserved':
      return `reserved from ${new Date(e.startAt as number).toLocaleTimeString([], { hour12: false })} on ${(e.hosts as string[]).join(', ')}`;
    case 'ReservationCleared':
      return `reservation cleared (${String(e.reason)})`;
    case 'JobRejected': {
      const reason = e.reason as { category: string; path: string; message: string };
      return `rejected: ${reason.category}${reason.path === '' ? '' : ` at ${reason.path}`} — ${reason.message}`;
    }
    case 'QueueSet': {
      const q = e.queue as { name: string; parent?: string };
      return `queue ${q.name} set${q.parent === undefined ? '' : ` under ${q.parent}`}`;
    }
    case 'JobFinished':
      return `finished: ${String(e.outcome)}`;
    case 'JobPended':
      return 'pending again';
    case 'JobCancelled':
      return 'cancel requested';
    case 'JobClosed':
      return 'close requested';
    case 'TaskCompleted': {
      // contract v1.2: how a member ended (DESIGN.md §15)
      const how = typeof e.exitCode === 'number' ? ` (exit code ${e.exitCode})` : typeof e.signal === 'string' ? ` (${e.signal})` : '';
      return `member ${String(e.member)} on ${String(e.nodeId)} finished ${e.ok === false ? 'failed' : 'ok'}${how}`;
    }
    case 'GangRestarting': {
      // a member failed and the gang restarts whole (DESIGN.md §15)
      const how = typeof e.exitCode === 'number' ? `exited ${e.exitCode}` : typeof e.signal === 'string' ? `ended by ${e.signal}` : 'failed';
      return `member ${String(e.member)} on ${String(e.node)} ${how}: restarting whole as attempt ${String(e.attempt)}, not before ${new Date(e.notBefore as number).toLocaleTimeString([], { hour12: false })}`;
    }
    case 'AllocationReleased':
      return `released ${String(e.node)} ${String(e.role)}[${(e.members as number[]).join(',')}] (${String(e.cause)})`;
    case 'MemberBound':
      return `member ${String(e.member)} bound on ${String(e.node)}`;
    case 'HostDebited':
      return `debited ${String(e.node)}`;
    case 'DebitReversed':
      return `debit reversed on ${String(e.node)}`;
    default:
      return e.type;
  }
}
