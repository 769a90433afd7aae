import Table from 'cli-table3';
import type { Decision, GangResized } from '@muster/core';

/** A borderless, left-aligned table with a header row (kubectl style). */
export function renderTable(head: string[], rows: string[][]): string {
  const table = new Table({
    head,
    chars: {
      top: '', 'top-mid': '', 'top-left': '', 'top-right': '',
      bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
      left: '', 'left-mid': '', mid: '', 'mid-mid': '',
      right: '', 'right-mid': '', middle: '  ',
    },
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
  });
  table.push(...rows);
  return table.toString().split('\n').map((line) => line.trimEnd()).join('\n');
}

/** Millicores as cores: 1500 → `1.5`. */
export function cores(millicores: number): string {
  return trimNumber(millicores / 1000);
}

/** MiB as GiB: 1536 → `1.5`. */
export function gib(mb: number): string {
  return trimNumber(mb / 1024);
}

function trimNumber(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2).replace(/0+$/, '').replace(/\.$/, '');
}

/** Host counts per host-level reason, largest first: `insufficient-gpu 4, select-mismatch 2`. */
export function hostCounts(hosts: Record<string, number>): string {
  return Object.entries(hosts)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([why, n]) => `${why} ${n}`)
    .join(', ');
}

/** Where a committed gang went: `sim-2 worker[0,1] gpus 0,1; sim-3 worker[2]`. */
export function placementText(decision: Pick<GangResized, 'allocations'>): string {
  return decision.allocations
    .map((a) => `${a.node} ${a.role}[${a.members.join(',')}]${a.gpuIds.length > 0 ? ` gpus ${a.gpuIds.join(',')}` : ''}`)
    .join('; ');
}

/**
 * One line for a decision: `j1  placed   sim-2 worker[0,1] gpus 0,1`, `j2  waits  insufficient-resources: …`,
 * or an elastic gang's resize (DESIGN.md §13): `e  resized  grew to 32 members: …` / `shrunk to 24 members by high: …`.
 */
export function decisionLine(decision: Decision | GangResized): string {
  if (decision.type === 'GangResized') return `${decision.jobId}  resized  ${resizeText(decision)}: ${placementText(decision)}`;
  if (decision.type === 'GangCommitted') return `${decision.jobId}  placed   ${placementText(decision)}`;
  const verb = decision.final ? 'aborted' : 'waits  ';
  const hosts = hostCounts(decision.reason.hosts);
  const cached = decision.reason.cached === true ? ' (cached)' : '';
  return `${decision.jobId}  ${verb}  ${decision.reason.category}${cached}: ${decision.reason.message}${hosts === '' ? '' : ` [hosts: ${hosts}]`}`;
}

/** Wall-clock time of day of a stamped time: `14:03:07`. */
export function clock(at: number): string {
  return new Date(at).toTimeString().slice(0, 8);
}

/** What a resize did: `grew to 32 members`, or `shrunk to 24 members by high` (a preemption took the rest). */
export function resizeText(resize: GangResized): string {
  return resize.by === undefined ? `grew to ${resize.members} members` : `shrunk to ${resize.members} members by ${resize.by}`;
}
