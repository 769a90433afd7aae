import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { auditLog } from '@muster/auditor';
import { connect, isBusError, readDecisions, readInputs, readLog } from '@muster/bus';
import type { Bus, InputMessage, StoredDecision } from '@muster/bus';
import { MusterClient } from '@muster/client';
import type { LoggedTransaction } from '@muster/core';
import { createStack, within } from '@muster/stack';
import { summarizeAudit } from './drillAudit.ts';
import type { DrillAuditSummary } from './drillAudit.ts';
import { startDrillCluster } from './drillCluster.ts';
import type { DrillCluster, ReplicaStatus } from './drillCluster.ts';
import { numbersByKind } from './drillByKind.ts';
import { drillLoad } from './drillCapacity.ts';
import { checkClock } from './drillClock.ts';
import { checkDecisions, nodeChurn, nodesByStatus, whereJobsAre } from './drillDecisions.ts';
import type { LiveRead } from './drillDecisions.ts';
import type { FaultRecord } from './drillFaultRecord.ts';
import { checkLiveness } from './drillLiveness.ts';
import { checkInputLoss } from './drillInputLoss.ts';
import { checkLogLoss } from './drillLogLoss.ts';
import { watchJetStream } from './drillNatsWatch.ts';
import type { HeadLoss } from './drillNatsWatch.ts';
import type { Interval } from './drillNatsWatch.ts';
import { resolveDrillOptions } from './drillOptions.ts';
import type { DrillOptions } from './drillOptions.ts';
import { drillRandom } from './drillRandom.ts';
import { readWhole } from './drillRead.ts';
import { recoverCluster } from './drillRecover.ts';
import { watchReplicas } from './drillReplicaWatch.ts';
import type { SilentReplica } from './drillReplicaWatch.ts';
import { replayLog, unreleased } from './drillReplay.ts';
import { drillFailures, drillNotes, drillVerdict, finding, lostHeadText } from './drillReport.ts';
import type { DrillReport } from './drillReport.ts';
import { drillFault } from './faults/index.ts';
import { runFaultSchedule } from './drillSchedule.ts';
import { settleDrill } from './drillSettle.ts';
import type { SettleResult } from './drillSettle.ts';
import { sleepUntil } from './drillSleep.ts';
import { electionsLogged, leaseWins } from './drillLeaseWins.ts';
import { spread, takeovers } from './drillTakeover.ts';
import { startDrillWorkload } from './drillWorkload.ts';
import type { DrillWorkload } from './drillWorkload.ts';

/** What a drill reports to and listens to while it runs. */
export interface DrillHooks {
  /** Called with one line at each step (stack up, each fault, settling). */
  progress?: (line: string) => void;
  /** Aborting ends the workload and the faults early; everything is still stopped and reported. */
  signal?: AbortSignal;
  /** Called with what the checks read, while the cluster still runs (to record a live tail). */
  onRead?: (read: LiveRead & { accepted: string[] }, bus: Bus) => Promise<void> | void;
}

// the first fault waits for the workload to be under way; none starts in the last seconds, so each
// takeover happens under load
const WARM_UP_MS = 3_000;
const LAST_FAULT_BEFORE_END_MS = 5_000;

/**
 * Runs one HA drill on loopback: a three-node NATS cluster with R3 streams, three scheduler
 * replica processes and simulated agents; a workload of gang submissions while faults are
 * injected on the chosen schedule; then, at rest, the checks: accepted jobs lost, decisions
 * duplicated or contradicted, overcommit, divergence between replicas and from replay,
 * liveness, the auditor's verdict, and takeover times. Everything it starts it stops, in
 * bounded time, whatever happens; an error is reported, not thrown.
 */
export async function runDrill(options: Partial<DrillOptions>, hooks: DrillHooks = {}): Promise<DrillReport> {
  const opts = resolveDrillOptions(options);
  const started = Date.now();
  const runId = `d${started.toString(36)}`;
  const progress = (line: string): void => hooks.progress?.(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${line}`);
  const logsDir = opts.keepLogsDir === null ? null : join(opts.keepLogsDir, `drill-${runId}`);
  const stack = createStack(logsDir === null ? {} : { dir: logsDir, keepLogs: true });
  const report = emptyReport(opts, started, logsDir);
  let cluster: DrillCluster | null = null;
  try {
    cluster = await startDrillCluster(stack, opts, progress);
    await exercise(cluster, opts, runId, report, progress, hooks);
  } catch (err) {
    report.error = err instanceof Error ? err.message : String(err);
    progress(`error: ${report.error}`);
  } finally {
    // what the stores held at the end, for reading after (stopping removes them)
    if (logsDir !== null && cluster !== null) keepStores(cluster, logsDir);
    progress('stopping everything');
    report.stop = cluster === null ? await stack.stop() : await cluster.stop();
    progress(`stopped in ${report.stop.ms} ms${report.stop.killed.length > 0 ? ` (killed: ${report.stop.killed.join(', ')})` : ''}`);
  }
  report.ms = Date.now() - started;
  report.failures = drillFailures(report);
  report.notes = drillNotes(report);
  report.verdict = drillVerdict(report);
  report.ok = report.verdict === 'pass';
  return report;
}

// a copy of each NATS node's JetStream store beside its log, taken while it runs (the cluster is at rest, or as still as it got)
function keepStores(cluster: DrillCluster, dir: string): void {
  for (const node of cluster.nats.nodes) {
    try {
      cpSync(join(node.dataDir, 'jetstream'), join(dir, `${node.name}-store`), { recursive: true });
    } catch {
      // a store being written or a node's folder gone: the logs are still kept
    }
  }
}

async function exercise(
  cluster: DrillCluster,
  opts: DrillOptions,
  runId: string,
  report: DrillReport,
  progress: (line: string) => void,
  hooks: DrillHooks,
): Promise<void> {
  const signal = hooks.signal;
  const client = new MusterClient(cluster.bus, { timeoutMs: 2_000 });
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  const watch = await watchJetStream(cluster.bus, {
    onHeadLoss: (l) => progress(`${lostHeadText(l.stream, l.firstSeq)} (nothing of muster's deletes from it)`),
  });
  const workloadStart = Date.now();
  // a replica that stops answering is named when it is found, not by a reader of its log later
  const replicas = watchReplicas(cluster, { boundMs: opts.silentBoundMs, origin: workloadStart, say: progress });
  const endAt = workloadStart + opts.durationS * 1000;
  const workload = startDrillWorkload({ client, random: drillRandom(opts.seed), rate: opts.rate, prefix: runId });
  progress(`workload: ${opts.rate} gangs/s for ${opts.durationS} s; ${opts.schedule} faults (${opts.faults.join(', ')})`);
  const ticker = setInterval(() => progress(`workload: ${workload.attempted()} submitted, ${workload.accepted.size} accepted`), 15_000);
  let faults: FaultRecord[] = [];
  // submissions go on until the last fault has ended, which can be long after the duration
  let workloadEnd = endAt;
  try {
    // faults draw from their own stream, so changing them leaves the workload as it was
    const ctx = { cluster, opts, random: drillRandom(opts.seed ^ 0x5bd1e995), busy: new Set<string>(), progress };
    const schedule = runFaultSchedule(ctx, { startAt: workloadStart + WARM_UP_MS, lastAt: endAt - LAST_FAULT_BEFORE_END_MS, signal: stop.signal });
    await sleepUntil(endAt, stop.signal);
    stop.abort();
    faults = await schedule;
  } finally {
    clearInterval(ticker);
    if (signal?.aborted === true) await Promise.all([watch.stop(), replicas.stop()]);
    workloadEnd = Date.now();
    await workload.stop();
    signal?.removeEventListener('abort', onAbort);
    report.faults = faults;
    fillWorkload(report, workload);
  }
  if (signal?.aborted === true) throw new Error('interrupted');
  progress(`workload done: ${workload.attempted()} submitted, ${workload.accepted.size} accepted; recovering`);
  const trouble = await recoverCluster(cluster);
  if (trouble !== null) progress(`recovery: ${trouble}`);
  const settled = await settleDrill(cluster, client, opts.settleTimeoutMs, progress);
  const { down: unavailable, headLosses } = await watch.stop();
  const silent = await replicas.stop();
  progress(settled.trouble === null ? `at rest at log ${settled.logLastSeq}; checking` : `${settled.trouble}; checking anyway`);
  await check(cluster, opts, workload, { settled, unavailable, headLosses, silent, workloadStart, workloadEnd }, report, progress, hooks);
}

/** How long the audit of the drill's log may take (a 200-gangs/s run's takes a minute or two here). */
const AUDIT_BOUND_MS = 600_000;

/** How many times the audit is run when its read ended before the log's end (a consumer placed on a copy behind its stream). */
const AUDIT_ATTEMPTS = 3;

async function check(
  cluster: DrillCluster,
  opts: DrillOptions,
  workload: DrillWorkload,
  run: { settled: SettleResult; unavailable: Interval[]; headLosses: HeadLoss[]; silent: SilentReplica[]; workloadStart: number; workloadEnd: number },
  report: DrillReport,
  progress: (line: string) => void,
  hooks: DrillHooks,
): Promise<void> {
  // inputs, then decisions, then the log: a log read last holds every transaction the others depend on (LiveRead)
  // each on a connection of its own, bounded and retried (readWhole: a slow consumer hung the drill)
  const servers = cluster.nats.urls;
  const inputs: InputMessage[] = await readWhole(servers, 'MUSTER_IN', (bus, signal) => readInputs(bus, { withTime: true, signal }), progress);
  const stream: StoredDecision[] = await readWhole(servers, 'MUSTER_DECISIONS', (bus, signal) => readDecisions(bus, { signal }), progress);
  // a broken hash chain is the auditor's finding (chain), not a reason to report nothing
  const log: LoggedTransaction[] = await readWhole(servers, 'MUSTER_LOG', (bus, signal) => readLog(bus, { verifyChain: false, signal }), progress);
  const readAt = Date.now();

  const { settled, unavailable, headLosses, silent, workloadStart, workloadEnd } = run;
  const accepted = [...workload.accepted.keys()];
  const decisions = checkDecisions(accepted, { inputs, stream, log });
  await hooks.onRead?.({ inputs, stream, log, accepted }, cluster.bus);
  const statuses = [...settled.statuses.values()].filter((s): s is ReplicaStatus => s !== null);
  const replay = replayLog(log, new Set(statuses.map((s) => s.seq)));
  // each replica's lease wins and elections, read from its log once
  const logged = new Map<string, { wins: number[]; elections: Map<number, number> }>();
  const loggedBy = (id: string): { wins: number[]; elections: Map<number, number> } => {
    let l = logged.get(id);
    if (l === undefined) {
      const text = cluster.replicaIds.includes(id) ? cluster.replica(id).log() : '';
      logged.set(id, (l = { wins: leaseWins(text), elections: electionsLogged(text) }));
    }
    return l;
  };
  const leaderFaults = takeovers(report.faults, log, unavailable, (id) => loggedBy(id).wins, (id) => loggedBy(id).elections);
  let auditor: DrillAuditSummary | null = null;
  try {
    // bounded like every wait of the drill: on copies that disagree (JetStream lost writes) a read of the audit can wait for ever.
    // On a connection of its own, like the reads above: on the drill's, which had moved to another
    // node during the checks, a 200-gangs/s run's audit waited its whole bound with nothing sent
    const auditBus = await connect({ servers: [...servers], name: 'muster-drill-audit' });
    try {
      // said every 15 s: where an audit that does not finish stopped (none: before the first transaction)
      let said = Date.now();
      progress('auditing the log');
      const onProgress = (p: { seq: number; lastSeq: number; txPerSec: number }): void => {
        if (Date.now() - said < 15_000) return;
        said = Date.now();
        progress(`audit at log ${p.seq} of ${p.lastSeq} (${Math.round(p.txPerSec)} transactions/s)`);
      };
      // a read served by a copy that stopped behind its stream ends early, and says so: audit again
      // (up to AUDIT_ATTEMPTS in all), as the auditor asks, on a consumer placed anew. So does a read
      // whose consumer went away under it (nats-server 2.15.1 at load 18: `a pull went unanswered
      // … its consumer … is gone`): the audit's findings need a whole read, not the server's patience
      for (let attempt = 1; attempt <= AUDIT_ATTEMPTS; attempt++) {
        const audited = await within(
          auditLog(auditBus, { onProgress }).catch((err: unknown) => {
            if (attempt === AUDIT_ATTEMPTS || !isBusError(err) || err.code !== 'READ_STALLED') throw err;
            progress(`the audit's read failed (${err.message}): auditing again`);
            return 'again' as const;
          }),
          AUDIT_BOUND_MS,
        );
        if (audited === null) throw new Error(`the audit did not finish within ${AUDIT_BOUND_MS / 1000} s`);
        if (audited === 'again') continue;
        auditor = summarizeAudit(audited);
        if (!auditor.failures.some((f) => f.includes('the read of the log ended at'))) break;
        if (attempt < AUDIT_ATTEMPTS) progress(`the audit's read ended early (${auditor.failures[0] ?? ''}): auditing again`);
      }
    } finally {
      await within(auditBus.close(), 5_000).catch(() => undefined);
    }
  } catch (err) {
    // the drill's own checks stand without it; the report says the audit did not run and why
    report.auditorError = err instanceof Error ? err.message : String(err);
  }

  report.workload.logTransactions = log.length;
  report.workload.decisionsInLog = decisions.decisionsInLog;
  report.workload.decisionsOnStream = decisions.decisionsOnStream;
  report.workload.committed = accepted.length - decisions.neverCommitted.length;
  // rates over the time submissions really ran (a run whose last fault ended late submitted for longer)
  const durationS = Math.max(opts.durationS, (workloadEnd - workloadStart) / 1000);
  const inWorkload = (at: number): boolean => at >= workloadStart && at <= workloadStart + durationS * 1000;
  let committedInWorkload = 0;
  let completed = 0;
  const ours = new Set(accepted);
  for (const { tx } of log) {
    for (const e of tx.events) {
      if (e.type === 'GangCommitted' && ours.has(e.jobId) && inWorkload(e.at)) committedInWorkload++;
      if (e.type === 'JobFinished' && ours.has(e.jobId)) completed++;
    }
  }
  report.workload.completed = completed;
  report.workload.offeredRate = round1(report.workload.submitted / durationS);
  report.workload.achievedRate = round1(committedInWorkload / durationS);
  report.workload.load = round2(drillLoad(opts.rate, opts.nodes).load);
  report.takeover = {
    all: spread(leaderFaults.map((t) => t.decisionMs)),
    kill: spread(leaderFaults.filter((t) => t.kind === 'kill-leader').map((t) => t.decisionMs)),
    pause: spread(leaderFaults.filter((t) => t.kind === 'pause-leader').map((t) => t.decisionMs)),
    elected: spread(leaderFaults.map((t) => t.electedMs)),
    jetStream: spread(leaderFaults.map((t) => t.jetStreamMs)),
    muster: spread(leaderFaults.map((t) => t.musterMs)),
    detection: spread(leaderFaults.map((t) => t.detectionMs)),
    rebuild: spread(leaderFaults.map((t) => t.rebuildMs)),
    firstDecision: spread(leaderFaults.map((t) => t.firstDecisionMs)),
    missing: leaderFaults.filter((t) => t.decisionMs === null).length,
    elections: log.filter((l) => l.tx.kind === 'election').length,
    each: leaderFaults,
  };
  const byHash = new Map<number, Set<string>>();
  for (const s of statuses) byHash.set(s.seq, (byHash.get(s.seq) ?? new Set()).add(s.stateHash));
  report.checks = {
    lost: finding(decisions.lost),
    backlog: {
      notIngested: decisions.backlog.notIngested.length,
      pending: decisions.backlog.pending.length,
      unpublished: decisions.backlog.unpublished.length,
      examples: [...decisions.backlog.notIngested, ...decisions.backlog.pending, ...decisions.backlog.unpublished].slice(0, 10),
    },
    neverCommitted: finding(decisions.neverCommitted),
    duplicated: finding(decisions.duplicated),
    contradicted: finding(decisions.contradicted),
    unfinished: finding(decisions.unfinished),
    overcommit: { ...finding(replay.overcommits), auditor: auditor?.overcommit ?? 0 },
    unreleased: finding(unreleased(replay.final)),
    divergence: {
      replicas: [...byHash.values()].reduce((n, hashes) => n + hashes.size - 1, 0),
      replay: statuses.filter((s) => replay.hashes.get(s.seq) !== s.stateHash).length,
      notAtEnd: cluster.replicaIds.length - statuses.filter((s) => s.seq === settled.logLastSeq).length,
      auditor: auditor?.divergences ?? 0,
      statuses,
    },
    logLoss: checkLogLoss(statuses, log[log.length - 1]?.seq ?? 0, decisions.contradicted),
    inputLoss: checkInputLoss(workload.accepted.values(), inputs, log),
    liveness: checkLiveness(log, inputs, { from: workloadStart, to: settled.at }, opts.livenessBoundMs, unavailable),
    clock: checkClock(log, report.faults, readAt),
    natsUnavailable: {
      count: unavailable.length,
      totalMs: unavailable.reduce((ms, i) => ms + i.to - i.from, 0),
      longestMs: unavailable.reduce((ms, i) => Math.max(ms, i.to - i.from), 0),
      intervals: unavailable.map((i) => ({ fromMs: i.from - workloadStart, ms: i.to - i.from })),
    },
    headLoss: headLosses.map((h) => ({ stream: h.stream, firstSeq: h.firstSeq, atMs: h.at - workloadStart, natsFaults: natsFaultsBefore(report.faults, h.at) })),
    settle: {
      trouble: settled.trouble,
      pending: settled.pending,
      running: settled.running,
      progressing: settled.progressing,
      logRate: settled.logRate,
      unsettled: whereJobsAre(settled.unsettled, replay.final, stream),
      nodes: nodesByStatus(replay.final),
    },
    nodeChurn: nodeChurn(log),
    silent: { boundMs: opts.silentBoundMs, replicas: silent },
  };
  report.byKind = numbersByKind(
    report.faults,
    leaderFaults,
    log,
    { lost: decisions.lost, duplicated: decisions.duplicated, contradicted: decisions.contradicted, overcommit: replay.overcommits },
    new Set(accepted),
  );
  report.auditor = auditor;
  progress(`checked ${log.length} transactions, ${inputs.length} inputs, ${stream.length} decision messages; audit ${auditor === null ? `failed: ${report.auditorError}` : auditor.clean ? 'clean' : 'NOT clean'}`);
}

const round1 = (n: number): number => Math.round(n * 10) / 10;
const round2 = (n: number): number => Math.round(n * 100) / 100;

function fillWorkload(report: DrillReport, workload: DrillWorkload): void {
  report.workload.submitted = workload.attempted();
  report.workload.accepted = workload.accepted.size;
  report.workload.unacknowledged = workload.unacknowledged.length;
}

function emptyReport(opts: DrillOptions, started: number, logsDir: string | null): DrillReport {
  const none = { count: 0, p50: null, p99: null, max: null };
  const nothing = { count: 0, examples: [] };
  return {
    ok: false,
    verdict: 'fail',
    failures: [],
    notes: [],
    options: opts,
    startedAt: new Date(started).toISOString(),
    ms: 0,
    workload: { submitted: 0, accepted: 0, unacknowledged: 0, committed: 0, completed: 0, offeredRate: 0, achievedRate: 0, load: 0, logTransactions: 0, decisionsInLog: 0, decisionsOnStream: 0 },
    faults: [],
    takeover: { all: none, kill: none, pause: none, elected: none, jetStream: none, muster: none, detection: none, rebuild: none, firstDecision: none, missing: 0, elections: 0, each: [] },
    byKind: [],
    checks: {
      lost: nothing,
      backlog: { notIngested: 0, pending: 0, unpublished: 0, examples: [] },
      neverCommitted: nothing,
      duplicated: nothing,
      contradicted: nothing,
      unfinished: nothing,
      overcommit: { ...nothing, auditor: 0 },
      unreleased: nothing,
      divergence: { replicas: 0, replay: 0, notAtEnd: 0, auditor: 0, statuses: [] },
      logLoss: { logEnd: 0, highest: 0, examples: [], unbackedDecisions: 0 },
      inputLoss: { examples: [], count: 0, fromSeq: 0 },
      liveness: { boundMs: opts.livenessBoundMs, longestGapMs: 0, longestAttributableMs: 0, longGaps: 0, violations: [] },
      clock: { toleranceMs: 0, maxAheadMs: 0, fastStamps: 0, jumps: [] },
      natsUnavailable: { count: 0, totalMs: 0, longestMs: 0, intervals: [] },
      headLoss: [],
      settle: { trouble: null, pending: 0, running: 0, progressing: false, logRate: 0, unsettled: [], nodes: '' },
      nodeChurn: { lostByHeartbeat: 0, lostByOperator: 0, registeredAgain: 0 },
      silent: { boundMs: opts.silentBoundMs, replicas: [] },
    },
    auditor: null,
    auditorError: null,
    stop: null,
    error: null,
    logsDir,
  };
}

/** The NATS faults (`restart-nats n2`, numbered) injected in the minute before `at`, or still going then. */
function natsFaultsBefore(faults: readonly FaultRecord[], at: number): string[] {
  return faults
    .filter((f) => f.skipped === null && drillFault(f.kind).natsNode && f.at <= at && (f.endedAt >= at - 60_000 || f.endedAt === 0))
    .map((f) => `${f.n} ${f.kind} ${f.target}`);
}
