import type { StackStopReport } from '@muster/stack';
import type { DrillAuditSummary } from './drillAudit.ts';
import type { KindNumbers } from './drillByKind.ts';
import type { ClockResult } from './drillClock.ts';
import type { ReplicaStatus } from './drillCluster.ts';
import type { NodeChurn } from './drillDecisions.ts';
import type { FaultRecord } from './drillFaultRecord.ts';
import type { LivenessResult } from './drillLiveness.ts';
import type { InputLoss } from './drillInputLoss.ts';
import type { LogLoss } from './drillLogLoss.ts';
import type { DrillOptions } from './drillOptions.ts';
import type { SilentReplica } from './drillReplicaWatch.ts';
import type { Spread, Takeover } from './drillTakeover.ts';

/** The drill's verdict: passed, saturated but sound, or failed. */
export type DrillVerdict = 'pass' | 'saturated' | 'fail';

/** A count and the first few examples behind it. */
export interface Finding {
  count: number;
  examples: string[];
}

/** Everything a drill measured and checked: JSON only. `ok` is true when every check passed. */
export interface DrillReport {
  /** True when the verdict is `pass`. */
  ok: boolean;
  /** `pass`: every check passed at rest; `saturated`: nothing lost, duplicated, contradicted, overcommitted or divergent, but the cluster was still working through a backlog when the wait ended; `fail`: a check failed. */
  verdict: DrillVerdict;
  /** One line per failed check. */
  failures: string[];
  /** One line per thing that kept the drill from passing without being a failure (the backlog of a saturated run). */
  notes: string[];
  options: DrillOptions;
  startedAt: string;
  ms: number;
  workload: {
    submitted: number;
    accepted: number;
    /** Submissions never acknowledged (not accepted, so not counted as lost). */
    unacknowledged: number;
    committed: number;
    /** Accepted jobs whose gang finished (JobFinished in the log). */
    completed: number;
    /** Submissions a second, as offered. */
    offeredRate: number;
    /** Commits of accepted jobs a second while the workload ran. */
    achievedRate: number;
    /** The expected load of the offered rate on the drill's nodes (the busiest resource; 1 = saturated on average). */
    load: number;
    logTransactions: number;
    decisionsInLog: number;
    decisionsOnStream: number;
  };
  faults: FaultRecord[];
  /** The numbers of each fault kind. */
  byKind: KindNumbers[];
  takeover: {
    /** Fault to the first decision by another replica, over every leader fault. */
    all: Spread;
    kill: Spread;
    pause: Spread;
    /** Fault to the new leader's LeaderElected. */
    elected: Spread;
    /** The part of each takeover when JetStream could not serve muster's streams, and the rest (muster's own time). */
    jetStream: Spread;
    muster: Spread;
    /** The takeover split along the replica that decided first: fault to its lease won, to its LeaderElected, to its first decision. */
    detection: Spread;
    rebuild: Spread;
    firstDecision: Spread;
    /** Leader faults after which no other replica took over. */
    missing: number;
    /** LeaderElected transactions in the log, the first leader's included: more than one per leader fault means leases lost without one (a lease too short for the load). */
    elections: number;
    each: Takeover[];
  };
  checks: {
    /** Accepted jobs lost: not in MUSTER_IN, skipped at ingest, or a decision missing on MUSTER_DECISIONS though later ones are there. */
    lost: Finding;
    /** Accepted work not done but not lost: stored and not ingested yet, pending, decided and not yet published. */
    backlog: { notIngested: number; pending: number; unpublished: number; examples: string[] };
    /** Accepted jobs that never got a GangCommitted (each drill job fits, so each must be placed). */
    neverCommitted: Finding;
    duplicated: Finding;
    contradicted: Finding;
    /** Gangs stopped at their runtime limit with members not reported done before it (a bind or completion late or lost on its way). */
    unfinished: Finding;
    overcommit: Finding & { auditor: number };
    /** Nodes with use left when nothing runs (exact release). */
    unreleased: Finding;
    divergence: {
      /** Replicas at the same sequence with different state hashes. */
      replicas: number;
      /** Replicas whose hash differs from a replay of the log to their sequence. */
      replay: number;
      /** Replicas not answering, or not at the log's end, after quiescing. */
      notAtEnd: number;
      /** Events the auditor re-derived differently. */
      auditor: number;
      statuses: ReplicaStatus[];
    };
    /** MUSTER_LOG lost transactions it had stored (a replica folded or saw past the log's end): JetStream lost acknowledged writes. */
    logLoss: LogLoss;
    /** Submissions not where JetStream acknowledged them: on MUSTER_IN as read at the end, or in the log's ingest. */
    inputLoss: InputLoss;
    liveness: LivenessResult;
    /** Whether any stamp ran ahead of true time (a fast clock jumping the log's time). */
    clock: ClockResult;
    /** When JetStream could not serve muster's streams (a NATS node down, its streams electing leaders); `fromMs` counts from the workload's start. */
    natsUnavailable: { count: number; totalMs: number; longestMs: number; intervals: { fromMs: number; ms: number }[] };
    /** Streams nothing deletes from whose first sequence moved past 1 during the run (JetStream lost their head), when first seen (ms into the workload), and the NATS faults in the minute before. */
    headLoss: { stream: string; firstSeq: number; atMs: number; natsFaults: string[] }[];
    /** Whether the cluster came to rest; `unsettled` says where some of the jobs still pending or running are, `nodes` the log's nodes by status (`28 up, 2 lost (sim-4, sim-9)`). */
    settle: { trouble: string | null; pending: number; running: number; progressing: boolean; logRate: number; unsettled: string[]; nodes: string };
    /** Nodes lost and registered again over the run (a lost node whose agent is heard again registers it). */
    nodeChurn: NodeChurn;
    /** Replicas that did not answer their status for longer than `boundMs` while another did, from the workload's start to rest (`from` counts from the workload's start). */
    silent: { boundMs: number; replicas: SilentReplica[] };
  };
  auditor: DrillAuditSummary | null;
  /** Why the auditor did not run, or null. */
  auditorError: string | null;
  stop: StackStopReport | null;
  /** What stopped the drill early (a failure to start, an interrupt), or null. */
  error: string | null;
  /** Where the logs were kept, or null. */
  logsDir: string | null;
}

/** A finding from a list: its length and the first `n` entries. */
export function finding(items: readonly string[], n = 10): Finding {
  return { count: items.length, examples: items.slice(0, n) };
}

/** The failed checks of a report, one line each (empty when the drill passed). */
export function drillFailures(r: DrillReport): string[] {
  const out: string[] = [];
  const c = r.checks;
  const fail = (cond: boolean, line: string): void => {
    if (cond) out.push(line);
  };
  fail(r.error !== null, `drill did not complete: ${r.error}`);
  // first: the findings that name log sequences past the end follow from it
  fail(c.logLoss.examples.length > 0, `JetStream lost acknowledged writes: MUSTER_LOG ends at ${c.logLoss.logEnd}, but ${c.logLoss.examples.join(', ')}; the findings naming log sequences past ${c.logLoss.logEnd}, or decisions the log does not back, follow from it`);
  // first of all: JetStream dropped a stream's head, which the loss findings below follow from
  for (const h of c.headLoss) fail(true, headLossText(h));
  fail(c.inputLoss.count > 0, `MUSTER_IN is not what JetStream acknowledged: ${c.inputLoss.count} submissions not where they were acknowledged (${c.inputLoss.examples[0] ?? ''}); the auditor's ingest divergences from input ${c.inputLoss.fromSeq} on follow from it`);
  fail(c.lost.count > 0, `${c.lost.count} accepted jobs lost (${c.lost.examples.slice(0, 2).join('; ')})`);
  // a cluster still deciding when the wait ended has a backlog: that is saturation (drillNotes), not a failure
  const saturated = isSaturated(r);
  fail(!saturated && c.neverCommitted.count > 0, `${c.neverCommitted.count} accepted jobs never committed (${c.neverCommitted.examples.slice(0, 3).join(', ')})`);
  fail(c.duplicated.count > 0, `${c.duplicated.count} duplicated decisions: ${c.duplicated.examples[0] ?? ''}`);
  fail(c.contradicted.count > 0, `${c.contradicted.count} contradicted decisions: ${c.contradicted.examples[0] ?? ''}`);
  fail(c.unfinished.count > 0, `${c.unfinished.count} gangs stopped at their runtime limit with members that did not report done before it (${c.unfinished.examples[0] ?? ''})`);
  fail(c.overcommit.count + c.overcommit.auditor > 0, `overcommit: ${c.overcommit.count} found by replay, ${c.overcommit.auditor} by the auditor`);
  fail(c.unreleased.count > 0, `${c.unreleased.count} nodes not released when nothing runs`);
  const d = c.divergence;
  fail(d.replicas > 0, `${d.replicas} replicas diverge from another at the same sequence`);
  fail(d.replay > 0, `${d.replay} replicas diverge from a replay of the log`);
  fail(!saturated && d.notAtEnd > 0, `${d.notAtEnd} replicas not at the log's end after quiescing`);
  fail(d.auditor > 0, `the auditor re-derived ${d.auditor} events differently`);
  fail(c.liveness.violations.length > 0, `${c.liveness.violations.length} waits over ${c.liveness.boundMs} ms with work that fits and JetStream up (longest ${c.liveness.longestAttributableMs} ms)`);
  fail(c.clock.jumps.length > 0, `the log's time jumped: ${c.clock.jumps[0] ?? ''}`);
  fail(!saturated && c.settle.trouble !== null, `settle: ${c.settle.trouble}${c.settle.unsettled.length > 0 ? ` (${c.settle.unsettled.slice(0, 2).join('; ')})` : ''}; nodes in the log: ${c.settle.nodes}`);
  for (const s of c.silent.replicas) fail(true, `replica ${s.id} (pid ${s.pid}) did not answer its status for ${Math.round(s.ms / 1000)} s from ${Math.round(s.from / 1000)} s into the workload (${s.answeredAgain ? 'then answered again' : 'never again'})`);
  fail(r.takeover.missing > 0, `${r.takeover.missing} leader faults with no takeover`);
  for (const f of r.faults) fail(f.error !== null, `fault ${f.n} ${f.kind}: ${f.error}`);
  if (r.auditor === null) fail(r.error === null, `the auditor did not run: ${r.auditorError ?? 'no reason given'}`);
  else fail(!r.auditor.clean, `audit not clean: ${r.auditor.failureCount} failures (${r.auditor.failures[0] ?? ''})`);
  fail(r.stop !== null && r.stop.survivors.length > 0, `still running after stop: ${r.stop?.survivors.join(', ')}`);
  return out;
}

/**
 * Whether a run that did not come to rest was only saturated: the wait ended with a leader still
 * growing the log, every accepted job not committed is in the backlog (waiting in MUSTER_IN,
 * pending, or decided and queued for publishing), and nothing was lost.
 */
export function isSaturated(r: DrillReport): boolean {
  const c = r.checks;
  if (c.settle.trouble === null || !c.settle.progressing || c.lost.count > 0) return false;
  return c.neverCommitted.count <= c.backlog.notIngested + c.backlog.pending;
}

/** What kept a sound run from passing: its backlog when the wait ended (empty unless saturated). */
export function drillNotes(r: DrillReport): string[] {
  if (!isSaturated(r)) return [];
  const c = r.checks;
  const b = c.backlog;
  return [
    `saturated, still working through a backlog: ${c.settle.trouble}; log growing at ${c.settle.logRate} transactions/s; ` +
      `${b.notIngested} accepted jobs not ingested yet, ${b.pending} pending, ${b.unpublished} decided and not yet published; ` +
      `offered ${r.workload.offeredRate}/s, committed ${r.workload.achievedRate}/s (expected load ${r.workload.load} of capacity)`,
  ];
}

/** What a stream that nothing deletes from lost when its first sequence is `firstSeq`. */
export function lostHeadText(stream: string, firstSeq: number): string {
  return `JetStream lost ${stream}'s sequences 1 to ${firstSeq - 1}`;
}

function headLossText(h: DrillReport['checks']['headLoss'][number]): string {
  const near = h.natsFaults.length === 0 ? 'no NATS fault in the minute before' : `after ${h.natsFaults.join(', ')}`;
  return `${lostHeadText(h.stream, h.firstSeq)} (first seen ${Math.round(h.atMs / 1000)} s in; ${near})`;
}

/** The verdict: `fail` if any check failed, else `saturated` if the run ended with a backlog, else `pass`. */
export function drillVerdict(r: DrillReport): DrillVerdict {
  if (r.failures.length > 0) return 'fail';
  return r.notes.length > 0 ? 'saturated' : 'pass';
}

const ms = (v: number | null): string => (v === null ? '-' : `${v} ms`);
const spreadText = (s: Spread): string => (s.count === 0 ? 'none' : `n=${s.count}  p50 ${ms(s.p50)}  p99 ${ms(s.p99)}  max ${ms(s.max)}`);

/** The report as a short table for people. */
export function drillTable(r: DrillReport): string {
  const c = r.checks;
  const d = c.divergence;
  const kinds = new Map<string, number>();
  for (const f of r.faults) if (f.skipped === null) kinds.set(f.kind, (kinds.get(f.kind) ?? 0) + 1);
  const skipped = r.faults.filter((f) => f.skipped !== null).length;
  const auditor = r.auditor === null ? `did not run${r.auditorError === null ? '' : `: ${r.auditorError}`}` : r.auditor.clean ? `clean (${r.auditor.transactions} transactions)` : `NOT CLEAN: ${r.auditor.failures[0] ?? ''}`;
  const rows: [string, string][] = [
    ['faults', `${r.faults.length - skipped} injected (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}), ${skipped} skipped`],
    ['takeover', spreadText(r.takeover.all)],
    ['  kill -9', spreadText(r.takeover.kill)],
    ['  SIGSTOP', spreadText(r.takeover.pause)],
    ['  elected', spreadText(r.takeover.elected)],
    ['  JetStream', spreadText(r.takeover.jetStream)],
    ['  muster', spreadText(r.takeover.muster)],
    ['  detection', spreadText(r.takeover.detection)],
    ['  rebuild', spreadText(r.takeover.rebuild)],
    ['  1st decision', spreadText(r.takeover.firstDecision)],
    ['elections', `${r.takeover.elections} in the log, after ${r.takeover.each.length} leader faults`],
    ['workload', `${r.workload.submitted} submitted, ${r.workload.accepted} accepted, ${r.workload.unacknowledged} unacknowledged, ${r.workload.committed} committed, ${r.workload.completed} completed`],
    ['rate', `offered ${r.workload.offeredRate}/s, committed ${r.workload.achievedRate}/s during the workload, on ${r.options.nodes} nodes (expected load ${r.workload.load})`],
    ['log', `${r.workload.logTransactions} transactions, ${r.workload.decisionsInLog} decisions (${r.workload.decisionsOnStream} on MUSTER_DECISIONS)`],
    ['lost', String(c.lost.count)],
    ['backlog', `${c.backlog.notIngested} not ingested, ${c.backlog.pending} pending, ${c.backlog.unpublished} unpublished`],
    ['duplicated', String(c.duplicated.count)],
    ['contradicted', String(c.contradicted.count)],
    ['stopped at limit', `${c.unfinished.count} with members not reported done before their limit`],
    ['overcommit', `${c.overcommit.count} (auditor ${c.overcommit.auditor})`],
    ['log loss', c.logLoss.examples.length === 0 ? 'none (no replica folded or saw past the log\'s end, refused for lost writes, or a decision the log does not back)' : `MUSTER_LOG ends at ${c.logLoss.logEnd}; ${c.logLoss.examples.join(', ')}`],
    ['input loss', c.inputLoss.count === 0 ? 'none (every submission on MUSTER_IN and in the log at the sequence it was acknowledged at)' : `${c.inputLoss.count}: ${c.inputLoss.examples.slice(0, 2).join('; ')}`],
    ['divergence', `${d.replicas} between replicas, ${d.replay} from replay, ${d.notAtEnd} not at end, ${d.auditor} re-derived`],
    ['liveness', `${c.liveness.violations.length} waits over ${c.liveness.boundMs} ms with work that fits (longest gap between decisions ${c.liveness.longestGapMs} ms, ${c.liveness.longestAttributableMs} ms of it with JetStream up)`],
    ['clock', `stamps at most ${c.clock.maxAheadMs} ms ahead of true time (tolerance ${c.clock.toleranceMs} ms), ${c.clock.fastStamps} written by a replica with its clock ahead`],
    ['nats restarts', natsRestarts(r.faults)],
    ['nats down', `${c.natsUnavailable.count} stretches, ${c.natsUnavailable.totalMs} ms in all, longest ${c.natsUnavailable.longestMs} ms`],
    ['head loss', c.headLoss.length === 0 ? 'none (every append-only stream starts at sequence 1)' : c.headLoss.map(headLossText).join('; ')],
    ['silent', c.silent.replicas.length === 0 ? `no replica went more than ${c.silent.boundMs} ms without answering while another answered` : c.silent.replicas.map((s) => `${s.id} ${Math.round(s.ms / 1000)} s from ${Math.round(s.from / 1000)} s`).join(', ')],
    ['nodes', `${c.nodeChurn.lostByHeartbeat} lost by heartbeat, ${c.nodeChurn.lostByOperator} by an operator, ${c.nodeChurn.registeredAgain} registered again; at the end ${c.settle.nodes}`],
    ['audit', auditor],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const verdict = r.verdict.toUpperCase();
  const head = `muster drill: ${r.options.schedule}, ${r.options.durationS} s, fault every ${r.options.faultEveryS} s, seed ${r.options.seed}: ${verdict} in ${(r.ms / 1000).toFixed(1)} s`;
  const body = rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`);
  body.push(...kindTable(r.byKind));
  body.push(...slowTakeovers(r.takeover.each));
  return [head, ...body, ...r.notes.map((n) => `NOTE ${n}`), ...r.failures.map((f) => `FAIL ${f}`)].join('\n');
}

/** NATS nodes started on an empty store (a full disk's planned recovery; a stalled copy never is) and stalled copies restarted on their own store. */
function natsRestarts(faults: readonly FaultRecord[]): string {
  const empty = faults.filter((f) => f.disk?.recovery === 'empty-store').length;
  const stalled = faults.reduce((n, f) => n + (f.stalledRestarts ?? 0), 0);
  return `${empty} on an empty store (the full-disk recovery; never for a copy that stopped catching up), ${stalled} of a node whose copy stopped catching up, on its own store`;
}

// a takeover slower than this is listed with its split and the faults overlapping it
const SLOW_TAKEOVER_MS = 1_000;

/** One line per takeover slower than a second: where its time went, and what else was going on. */
function slowTakeovers(each: readonly Takeover[]): string[] {
  return each
    .filter((t) => t.decisionMs === null || t.decisionMs > SLOW_TAKEOVER_MS)
    .map((t) => {
      const split = `detection ${ms(t.detectionMs)}, rebuild ${ms(t.rebuildMs)}, first decision ${ms(t.firstDecisionMs)}; JetStream down ${ms(t.jetStreamMs)} of it`;
      const over = t.overlapping.length === 0 ? 'no other fault' : `overlapping fault ${t.overlapping.join(', ')}`;
      return `slow takeover after fault ${t.fault} ${t.kind} ${t.from} -> ${t.to ?? 'none'}: ${ms(t.decisionMs)} (${split}; ${over})`;
    });
}

const triple = (s: Spread): string => (s.count === 0 ? '-' : `${s.p50}/${s.p99}/${s.max}`);

/** One line per fault kind: count, takeover p50/p99/max (total, JetStream's, muster's), findings in its windows, commits in its windows. */
function kindTable(kinds: readonly KindNumbers[]): string[] {
  if (kinds.length === 0) return [];
  const head = ['by fault', 'n', 'takeover p50/p99/max ms', 'JetStream', 'muster', 'lost', 'dup', 'contra', 'over', 'committed', 'longest gap ms'];
  const rows = kinds.map((k) => [
    k.kind,
    `${k.injected}${k.skipped > 0 ? ` (+${k.skipped} skipped)` : ''}`,
    triple(k.takeover.total),
    triple(k.takeover.jetStream),
    triple(k.takeover.muster),
    String(k.lost),
    String(k.duplicated),
    String(k.contradicted),
    String(k.overcommit),
    `${k.committed} (${k.committedRate}/s)`,
    String(k.longestGapMs),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  return [head, ...rows].map((row) => row.map((cell, i) => cell.padEnd(widths[i] as number)).join('  ').trimEnd());
}
