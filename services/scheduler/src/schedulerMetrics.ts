import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { JOB_STATUSES, QUEUE_RESOURCES, queueViews, shardGet } from '@muster/core';
import type { LoggedTransaction, QueueView, State } from '@muster/core';
import type { ConnectionChangeCount } from './connectionChanges.ts';
import { summarise } from './stateSummary.ts';
import type { StateSummary } from './stateSummary.ts';

// The metrics of DESIGN.md §14, from the replica's folded state (gauges read at scrape time) and
// its own counters (decisions folded, sessions run). Labels take values from fixed sets (job
// status, reason category, resource, node status) or from names an operator defines (queues,
// replica id): never a job or node id, so the number of series does not grow with the workload.

/** Job statuses, each exported even at zero (so a rule can compare them from the first scrape). */
const JOB_STATES = JOB_STATUSES;
/** Node statuses. */
const NODE_STATES = ['up', 'drained', 'lost'] as const;
/** The resources a node has, as the state counts them. */
const RESOURCES = ['cpu', 'memoryMb', 'gpus', 'slots'] as const;
/** The event types counted as decisions, with the field their category comes from. */
const DECISION_TYPES = new Set(['GangCommitted', 'GangAborted', 'GangReserved', 'ReservationCleared', 'GangResized', 'JobRejected', 'InputRejected']);

/** Where the replica is, for the gauges that are not in the state. */
export interface ReplicaProgress {
  /** Whether this replica leads. */
  isLeader(): boolean;
  /** The state it has folded. */
  state(): State;
  /** The log's last sequence on the server, or null when it cannot be asked now. */
  lastLogSequence(): Promise<number | null>;
  /** What its NATS connections went through since the process started. */
  connectionChanges(): readonly ConnectionChangeCount[];
}

/**
 * The Prometheus registry of one replica: `muster_*` gauges computed from the folded state when
 * scraped, counters and histograms fed by `folded` (every transaction this replica adopts, as
 * leader or standby) and `sessionRan` (the leader's turns that ran a session).
 */
export class SchedulerMetrics {
  /** The registry `/metrics` serves. */
  readonly registry = new Registry();
  private readonly decisions: Counter<'type' | 'category'>;
  private readonly submitToDecision: Histogram;
  private readonly session: Histogram;
  private readonly folds: Counter;
  private readonly restarts: Counter;
  private lastSeenLogSeq = 0;

  constructor(replicaId: string, progress: ReplicaProgress) {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ replica: replicaId });
    collectDefaultMetrics({ register: this.registry });
    this.decisions = new Counter({
      name: 'muster_decisions_total',
      help: 'Decisions folded by this replica since it started following the log, by event type and reason category ("" for a commit)',
      labelNames: ['type', 'category'],
      registers,
    });
    this.submitToDecision = new Histogram({
      name: 'muster_submit_to_decision_seconds',
      help: "Stamped time from a job's submission to its placement (GangCommitted) or final abort",
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14400, 86400],
      registers,
    });
    this.session = new Histogram({
      name: 'muster_session_seconds',
      help: "Time the leader spent computing its turns that ran a scheduling session (ingest, session, transactions planned; not the work between the turn's slices)",
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.folds = new Counter({ name: 'muster_transactions_folded_total', help: 'Log transactions this replica folded since it started following the log', registers });
    this.restarts = new Counter({
      name: 'muster_gang_restarts_total',
      help: 'Gangs stopped and requeued whole after a member failed (GangRestarting, DESIGN.md §15), folded by this replica since it started following the log',
      registers,
    });
    new Counter({
      name: 'muster_nats_connection_changes_total',
      help: "Changes of this replica's NATS connections since the process started, by connection (main, snapshots) and kind: disconnect, reconnect, and the moves off a server that stopped answering pings (stale) or serving JetStream (unavailable)",
      labelNames: ['connection', 'kind'],
      registers,
      collect(this: Counter<'connection' | 'kind'>) {
        this.reset();
        for (const c of progress.connectionChanges()) this.inc({ connection: c.connection, kind: c.kind }, c.count);
      },
    });
    gauge(this.registry, 'muster_replica_leader', 'Whether this replica leads (1) or stands by (0)', [], (g) => g.set(progress.isLeader() ? 1 : 0));
    gauge(this.registry, 'muster_term', 'The leader term in the folded state', [], (g) => g.set(progress.state().term));
    gauge(this.registry, 'muster_log_sequence', 'Log sequence of the last transaction this replica folded', [], (g) => g.set(progress.state().seq));
    gauge(this.registry, 'muster_log_lag_transactions', "Transactions in MUSTER_LOG this replica has not folded yet (the last known end when the server cannot be asked)", [], async (g) => {
      const last = await progress.lastLogSequence().catch(() => null);
      if (last !== null) this.lastSeenLogSeq = last;
      g.set(Math.max(0, this.lastSeenLogSeq - progress.state().seq));
    });
    const summary = (): StateSummary => summarise(progress.state());
    gauge(this.registry, 'muster_jobs', 'Jobs in the live state by status (retired jobs are not counted)', ['state'], (g) => {
      const counts = summary().jobsByStatus;
      for (const state of JOB_STATES) g.set({ state }, counts.get(state) ?? 0);
    });
    gauge(this.registry, 'muster_pending_jobs', 'Pending jobs by the category of their latest reason ("new": not tried yet)', ['reason'], (g) => {
      g.reset();
      for (const [reason, n] of summary().pendingByReason) g.set({ reason }, n);
    });
    gauge(this.registry, 'muster_reservations', 'Pending jobs holding a reservation (GangReserved)', [], (g) => g.set(summary().reservations));
    gauge(this.registry, 'muster_nodes', 'Nodes by status', ['state'], (g) => {
      const counts = summary().nodesByStatus;
      for (const state of NODE_STATES) g.set({ state }, counts.get(state) ?? 0);
    });
    gauge(this.registry, 'muster_allocated', 'Resources allocated on nodes not lost (cpu in millicores, memoryMb in MiB, gpus and slots in units)', ['resource'], (g) => {
      for (const resource of RESOURCES) g.set({ resource }, summary().allocated[resource]);
    });
    gauge(this.registry, 'muster_capacity', 'Capacity of the nodes not lost (slots: of the nodes that limit them)', ['resource'], (g) => {
      for (const resource of RESOURCES) g.set({ resource }, summary().capacity[resource]);
    });
    // one queueViews per scrape serves both queue gauges (each collects in turn, the state unchanged between)
    let views: { state: State; rows: QueueView[] } | null = null;
    const queues = (): QueueView[] => {
      const state = progress.state();
      if (views === null || views.state !== state) views = { state, rows: queueViews(state) };
      return views.rows;
    };
    gauge(this.registry, 'muster_queue_used', "Resources held by each queue's running gangs, its child queues' included (the implicit default queue while no queue is defined, or while it holds jobs)", ['queue', 'resource'], (g) => {
      g.reset();
      for (const q of queues()) for (const resource of QUEUE_RESOURCES) g.set({ queue: q.name, resource }, q.used[resource]);
    });
    gauge(this.registry, 'muster_queue_guaranteed', "Each queue's guarantee on the resources it names (0 where it names none; the implicit default queue is guaranteed nothing)", ['queue', 'resource'], (g) => {
      g.reset();
      for (const q of queues()) for (const resource of QUEUE_RESOURCES) g.set({ queue: q.name, resource }, q.guaranteed[resource] ?? 0);
    });
  }

  /** Counts what a batch of transactions this replica just adopted decided; `state` is the state after them. */
  folded(txs: readonly LoggedTransaction[], state: State): void {
    this.folds.inc(txs.length);
    for (const { tx } of txs) {
      for (const event of tx.events) {
        if (event.type === 'GangRestarting') this.restarts.inc();
        if (!DECISION_TYPES.has(event.type)) continue;
        this.decisions.inc({ type: event.type, category: categoryOf(event) });
        if (event.type === 'GangCommitted' || (event.type === 'GangAborted' && event.final)) {
          const job = shardGet(state.jobs, event.jobId);
          if (job !== undefined) this.submitToDecision.observe(Math.max(0, event.at - job.submittedAt) / 1000);
        }
      }
    }
  }

  /** Records the computing time of one leader turn that ran a session. */
  sessionRan(seconds: number): void {
    this.session.observe(seconds);
  }
}

type GaugeCollect = (g: Gauge<string>) => void | Promise<void>;

function gauge(registry: Registry, name: string, help: string, labelNames: string[], collect: GaugeCollect): Gauge<string> {
  return new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    collect(this: Gauge<string>) {
      return collect(this);
    },
  });
}

function categoryOf(event: object): string {
  // an elastic gang's resize (DESIGN.md §13): shrunk by a preemptor (`by`), or grown
  if ((event as { type?: unknown }).type === 'GangResized') return (event as { by?: unknown }).by === undefined ? 'grown' : 'shrunk';
  const reason = (event as { reason?: unknown }).reason;
  if (typeof reason === 'string') return reason;
  if (typeof reason === 'object' && reason !== null && typeof (reason as { category?: unknown }).category === 'string') return (reason as { category: string }).category;
  return '';
}

