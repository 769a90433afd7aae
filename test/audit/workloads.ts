// The deterministic workloads behind the golden histories and the live audit tests: every placement
// policy, completions, a cancel, a close, a drain, rejections, node loss (by an operator and by
// silence), a timeout, and a leader handing over to a standby.
import { shardGet } from '@muster/core';
import type { JobState } from '@muster/core';
import type { WorkloadDriver } from './workloadDriver.ts';

/** A workload: what it exercises and how to drive it. */
export interface Workload {
  name: string;
  description: string;
  /** Scheduler replicas to start before running (the first leads). */
  replicas: string[];
  run(driver: WorkloadDriver): Promise<void>;
}

const cpuNode = (id: string, zone: string) => ({ id, labels: { zone }, capacity: { cpu: 8000, memoryMb: 16384, slots: 8 }, gpus: [] });
const gpuNode = (id: string) => ({
  id,
  labels: { zone: 'a', gpu_model: 'A100' },
  capacity: { cpu: 16000, memoryMb: 65536 },
  gpus: [0, 1, 2, 3].map((g) => ({ id: g, memoryMb: 81920, model: 'A100', nvlinkDomain: g < 2 ? 0 : 1 })),
});
const tasks = (id: string, n: number, more: Record<string, unknown> = {}) => ({
  id,
  identity: { user: 'alice', queue: 'default', project: 'p1' },
  tasks: n,
  resources: { cpu: 1000, memoryMb: 1024 },
  ...more,
});

const running = (j: { status: string }) => j.status === 'running';
const pendingWith = (category: string) => (j: { status: string; pendReason: { category: string } | null }) => j.status === 'pending' && j.pendReason?.category === category;

/** Every policy, completions, cancel, close, drain, rejections, the unsatisfiable cache. */
export const lifecycle: Workload = {
  name: 'lifecycle',
  description: 'pack (balanced and ptile), spread, same-node, GPU gangs with locality, heterogeneous roles, kept-warm, select; completions, failures, cancel (pending and running), close, drain, rejected inputs, cached and final aborts',
  replicas: ['s1'],
  async run(d) {
    for (const n of [cpuNode('c1', 'a'), cpuNode('c2', 'a'), cpuNode('c3', 'b'), cpuNode('c4', 'b'), gpuNode('g1'), gpuNode('g2')]) await d.register(n);
    await d.submit(tasks('pack-a', 6));
    await d.submit(tasks('ptile-b', 5, { resources: { cpu: 500, memoryMb: 512 }, placement: { policy: 'pack', ptile: 2 } }));
    await d.submit(tasks('spread-c', 3, { placement: { policy: 'spread' } }));
    await d.submit(tasks('same-d', 4, { placement: { policy: 'same-node' }, identity: { user: 'bob' } }));
    await d.submit({
      id: 'gpu-e',
      identity: { user: 'carol', queue: 'gpu', project: 'vision' },
      roles: [
        { name: 'trainer', count: 2, resources: { cpu: 2000, memoryMb: 4096, gpus: 2, gpuMemoryMb: 40000 }, command: ['python', 'train.py'] },
        { name: 'ps', count: 1, resources: { cpu: 1000, memoryMb: 2048 } },
      ],
      placement: { policy: 'pack', gpuLocality: true },
      select: "gpu_model == 'A100'",
      runtimeMs: 1000,
    });
    await d.submit(tasks('warm-f', 2, { minInstances: 2 }));
    await d.submit(tasks('select-g', 2, { select: "zone == 'b'" }));
    await d.submit(tasks('huge-h', 1, { resources: { cpu: 20000, memoryMb: 1024 } }));
    await d.submit(tasks('nomatch-i', 1, { select: "zone == 'z'" }));
    await d.submit(tasks('prio-k', 1, { priority: 5, identity: { user: 'dave' } }));
    await d.submit(tasks('late-l', 1, { resources: { cpu: 30000, memoryMb: 1024 }, timeoutMs: 400 }));
    // rejected inputs: an invalid spec, a duplicate id, an unknown subject, unknown job and node
    await d.submit(tasks('bad-x', 4, { minInstances: 3 }));
    await d.submit(tasks('pack-a', 1));
    await d.input('muster.in.frobnicate', {});
    await d.input('muster.in.cancel', { jobId: 'nobody' });
    await d.input('muster.in.node.ghost.drain', {});
    for (const id of ['pack-a', 'ptile-b', 'spread-c', 'same-d', 'gpu-e', 'warm-f', 'select-g', 'prio-k']) await d.job(id, running);
    await d.job('huge-h', pendingWith('placement-unsatisfiable'));
    await d.job('nomatch-i', pendingWith('no-matching-hosts'));
    await d.job('late-l', (j) => j.status === 'timedout');

    // a gang too big for what is free now, and an identical one served from the unsatisfiable cache
    // sent together so that they usually share a session (the second is then pended from the cache)
    await Promise.all([d.submit(tasks('big-j', 40)), d.submit(tasks('big-j2', 40))]);
    await d.submit(tasks('wait-m', 30, { identity: { user: 'erin' } }));
    await d.job('big-j', pendingWith('insufficient-resources'));
    await d.job('big-j2', pendingWith('insufficient-resources'));
    await d.input('muster.in.cancel', { jobId: 'wait-m' });
    await d.input('muster.in.cancel', { jobId: 'select-g' });
    await d.input('muster.in.close', { jobId: 'warm-f' });
    await d.complete('pack-a');
    await d.complete('ptile-b');
    await d.complete('spread-c');
    await d.complete('same-d');
    await d.complete('gpu-e', false);
    await d.complete('prio-k');
    await d.input('muster.in.node.c1.done', { jobId: 'pack-a', member: 0, ok: true });
    await d.job('big-j', running);
    await d.input('muster.in.node.c4.drain', {});
    await d.complete('big-j');
    await d.job('big-j2', running);
    await d.complete('big-j2');
    await d.input('muster.in.cancel', { jobId: 'huge-h' });
    const last = await d.input('muster.in.cancel', { jobId: 'nomatch-i' });
    await d.settle(last);
  },
};

/** Node loss by an operator and by silence, a timeout, then the leader stops and a standby takes over. */
export const lossAndFailover: Workload = {
  name: 'loss-and-failover',
  description: 'gangs requeued after an operator declares a node lost and after a node stops heartbeating, a timeout, a leader that stops and a standby that takes over (LeaderElected, term 2), a node that comes back',
  replicas: ['s1', 's2'],
  async run(d) {
    for (const n of [cpuNode('n1', 'a'), cpuNode('n2', 'a'), cpuNode('n3', 'b'), cpuNode('n4', 'b'), gpuNode('g1')]) await d.register(n);
    await d.submit(tasks('spread-a', 4, { placement: { policy: 'spread' } }));
    await d.submit(tasks('pack-b', 6, { identity: { user: 'bob' } }));
    await d.submit(tasks('gpu-c', 2, { resources: { cpu: 1000, memoryMb: 1024, gpus: 1 }, placement: { policy: 'pack', gpuLocality: true } }));
    for (const id of ['spread-a', 'pack-b', 'gpu-c']) await d.job(id, running);
    const spreadA = await d.job('spread-a', running);
    const victim = spreadA.members[0]!.node;
    await d.input(`muster.in.node.${victim}.lost`, {});
    await d.until(`node ${victim} lost by an operator`, (s) => shardGet(s.nodes, victim)?.status === 'lost');
    const packB = await d.job('pack-b', running);
    const silent = packB.members[0]!.node === victim ? packB.members.at(-1)!.node : packB.members[0]!.node;
    d.silence(silent);
    await d.until(`node ${silent} lost by heartbeat`, (s) => shardGet(s.nodes, silent)?.status === 'lost', 10_000);
    await d.submit(tasks('late-d', 50, { timeoutMs: 300 }));
    await d.job('late-d', (j) => j.status === 'timedout');

    await d.replicas.stop('s1');
    await d.replicas.leader(15_000);
    await d.register(cpuNode(victim, 'a'));
    await d.register(cpuNode(silent, 'a'));
    await d.submit(tasks('after-e', 3, { identity: { user: 'erin' } }));
    for (const id of ['spread-a', 'pack-b', 'gpu-c', 'after-e']) await d.job(id, running);
    for (const id of ['spread-a', 'pack-b', 'gpu-c', 'after-e']) await d.complete(id);
    const last = await d.input('muster.in.cancel', { jobId: 'late-d' });
    await d.settle(last);
  },
};

/**
 * A session too large for one transaction: 170 gangs wait in MUSTER_IN before the scheduler starts,
 * so one ingest and one session take them all, and the session is split into parts.
 */
export const bigSession: Workload = {
  name: 'big-session',
  description: 'inputs queued before the leader starts: one ingest batch, then one session of 170 gangs split into two transactions (part 1 and 2 of 2), DRF order over three users; then some completions',
  replicas: [],
  async run(d) {
    for (let i = 1; i <= 20; i++) {
      await d.register({ id: `b${String(i).padStart(2, '0')}`, labels: { zone: i % 2 === 0 ? 'a' : 'b' }, capacity: { cpu: 64000, memoryMb: 262144, slots: 40 }, gpus: [] });
    }
    const users = ['ann', 'ben', 'cy'];
    for (let i = 0; i < 170; i++) {
      await d.submit(tasks(`s${String(i).padStart(3, '0')}`, 4, { identity: { user: users[i % 3], queue: 'default', project: 'p1' }, priority: i % 10 === 0 ? 1 : 0 }));
    }
    await d.replicas.start('s1');
    await d.job('s169', running, 20_000);
    for (let i = 0; i < 10; i++) await d.complete(`s${String(i).padStart(3, '0')}`);
    const last = await d.input('muster.in.cancel', { jobId: 's169' });
    await d.settle(last);
  },
};

/**
 * Checkpoints taken without stalling a turn: each is an empty `checkpoint` transaction marking the
 * state, then a later Checkpoint naming the marked sequence (recorded with a checkpoint every 8
 * transactions, so a steady trickle of jobs gives several).
 */
export const markedCheckpoints: Workload = {
  name: 'marked-checkpoints',
  description: 'a trickle of gangs, completions and a cancel, with a checkpoint mark every 8 transactions and each Checkpoint appended turns later, naming the mark',
  replicas: ['s1'],
  async run(d) {
    for (const n of [cpuNode('m1', 'a'), cpuNode('m2', 'b')]) await d.register(n);
    for (let i = 0; i < 24; i++) {
      await d.submit(tasks(`m${String(i).padStart(2, '0')}`, 1 + (i % 3)));
      // every job but the last runs to completion, so the nodes never fill up
      if (i < 23) await d.complete(`m${String(i).padStart(2, '0')}`);
    }
    const last = await d.input('muster.in.cancel', { jobId: 'm23' });
    await d.settle(last);
  },
};

/**
 * Contract v1.1 on a new log (DESIGN.md §11): the first leader's policy defaults, an operator's
 * PolicySet, a gang blocked behind small jobs with runtime limits is reserved, a short job
 * backfills, a long one waits `reserved`, the limits stop the small jobs and the gang commits at
 * its reserved time, then its own limit stops it. Recorded in real time: the limits are seconds.
 */
export const reservations: Workload = {
  name: 'reservations',
  description: 'v1.1: policy defaults then a PolicySet; 16 small jobs with 4 s limits fill two hosts; a 16-member gang is reserved for when they end; a 0.5 s job backfills, an unlimited one waits reserved; the limits stop the small jobs, the gang commits at its reserved start and is stopped at its own limit; a cancel clears nothing held',
  replicas: ['s1'],
  async run(d) {
    await d.input('muster.in.policy', { reserveDepth: 1, assumedRuntimeMs: 600_000 });
    for (const n of [cpuNode('r1', 'a'), cpuNode('r2', 'b')]) await d.register(n);
    for (let i = 0; i < 16; i++) await d.submit(tasks(`small${String(i).padStart(2, '0')}`, 1, { runtimeLimitMs: 4_000 }));
    await d.job('small15', running);
    await d.submit(tasks('big', 16, { priority: 10, identity: { user: 'bea', queue: 'default', project: 'p1' }, runtimeLimitMs: 1_500 }));
    await d.job('big', (j) => j.reservation !== undefined);
    await d.complete('small00');
    await d.submit(tasks('short', 1, { runtimeLimitMs: 500 }));
    await d.job('short', running);
    await d.complete('small01');
    await d.submit(tasks('long', 1));
    await d.job('long', pendingWith('reserved'));
    await d.job('big', running, 20_000);
    await d.job('big', (j) => j.status === 'runtime-limit', 20_000);
    await d.job('long', running, 20_000);
    const last = await d.input('muster.in.cancel', { jobId: 'long' });
    await d.settle(last);
  },
};

const gpuTasks = (id: string, queue: string, n: number, more: Record<string, unknown> = {}) => ({
  id,
  identity: { user: queue, queue, project: 'p1' },
  tasks: n,
  resources: { cpu: 1000, memoryMb: 1024, gpus: 1 },
  ...more,
});

/**
 * Contract v1.1 queues (DESIGN.md §12): two teams each guaranteed half of 16 GPUs; team a borrows
 * the idle half, team b submits within its guarantee and gets it back in one session by
 * preempting whole gangs of a, which are requeued and run again when b's gang ends; a capped
 * queue waits on its max; bad queue specs and a job naming an unknown queue are rejected.
 */
export const queues: Workload = {
  name: 'queues',
  description: 'v1.1: queues a and b guaranteed 8 of 16 GPUs each, c capped at 4; bad queue specs (unknown parent, negative quota) and a job in an unknown queue rejected; a fills the cluster; b reclaims 8 GPUs by preempting two of a\'s gangs in one transaction; c waits on quota; a\'s victims run again when b ends; a within-queue lower-priority preemption in c',
  replicas: ['s1'],
  async run(d) {
    for (const n of ['g1', 'g2', 'g3', 'g4'].map(gpuNode)) await d.register(n);
    await d.input('muster.in.queue.a.set', { name: 'a', guaranteed: { gpus: 8 } });
    await d.input('muster.in.queue.b.set', { name: 'b', guaranteed: { gpus: 8 } });
    await d.input('muster.in.queue.c.set', { name: 'c', max: { gpus: 4 }, preemption: { withinQueue: 'lower-priority' } });
    await d.input('muster.in.queue.x.set', { name: 'x', parent: 'nope' });
    await d.input('muster.in.queue.y.set', { name: 'y', guaranteed: { gpus: -1 } });
    await d.submit(gpuTasks('stray', 'nope', 1));
    for (let i = 1; i <= 4; i++) await d.submit(gpuTasks(`a${i}`, 'a', 4));
    await d.job('a4', running);
    await d.submit(gpuTasks('b1', 'b', 8));
    await d.job('b1', running);
    // the latest-started gangs are the victims
    await d.job('a4', (j) => j.status === 'pending');
    await d.job('a3', (j) => j.status === 'pending');
    await d.complete('b1');
    await d.job('a3', running);
    await d.job('a4', running);
    await d.submit(gpuTasks('c1', 'c', 4));
    await d.job('c1', pendingWith('insufficient-resources'));
    await d.complete('a1');
    await d.job('c1', running);
    await d.submit(gpuTasks('c2', 'c', 4));
    await d.job('c2', pendingWith('quota'));
    await d.submit(gpuTasks('c3', 'c', 4, { priority: 5 }));
    await d.job('c3', running);
    await d.job('c1', (j) => j.status === 'pending' && j.pendReason?.category !== null);
    const last = await d.complete('a2').then(() => d.input('muster.in.cancel', { jobId: 'c2' }));
    await d.settle(last);
  },
};

const elasticJob = (id: string, user: string, minCount: number, count: number, more: Record<string, unknown> = {}) => ({
  id,
  identity: { user, queue: 'q', project: 'p1' },
  roles: [{ name: 'trainer', count, minCount, resources: { cpu: 1000, memoryMb: 1024, gpus: 1 } }],
  ...more,
});
const size = (n: number) => (j: JobState) => j.status === 'running' && j.members.filter((m) => m !== null).length === n;

/**
 * Contract v1.1 elastic gangs (DESIGN.md §13) on 16 GPUs: an elastic gang starts at the size that
 * fits beside a busy job, grows to full size when it ends, gives up its newest members to a
 * higher-priority job instead of being stopped, grows back when that ends, and is stopped whole
 * (and requeued) when shrinking to its minimum would not be enough; bad minCounts rejected.
 */
export const elastic: Workload = {
  name: 'elastic',
  description: 'v1.1: elastic gangs on 16 GPUs in a queue with lower-priority preemption: minCount above count and an elastic gang kept warm rejected; e1 (4..16) starts at 8 beside an 8-GPU job, grows to 16 when it ends, shrinks to 12 for a priority-5 job of 4, grows back to 16, and is stopped whole by a priority-9 job of 14 (more than it can give up) and runs again when that ends',
  replicas: ['s1'],
  async run(d) {
    for (const n of ['g1', 'g2', 'g3', 'g4'].map(gpuNode)) await d.register(n);
    await d.input('muster.in.queue.q.set', { name: 'q', preemption: { withinQueue: 'lower-priority' } });
    await d.submit(elasticJob('bad-min', 'alice', 5, 4));
    await d.submit(elasticJob('bad-warm', 'alice', 2, 4, { minInstances: 4 }));
    await d.submit(gpuTasks('busy', 'q', 8, { identity: { user: 'bob', queue: 'q', project: 'p1' } }));
    await d.job('busy', running);
    await d.submit(elasticJob('e1', 'alice', 4, 16));
    await d.job('e1', size(8));
    await d.complete('busy');
    await d.job('e1', size(16));
    await d.submit(gpuTasks('high', 'q', 4, { priority: 5, identity: { user: 'carol', queue: 'q', project: 'p1' } }));
    await d.job('high', running);
    await d.job('e1', size(12));
    await d.complete('high');
    await d.job('e1', size(16));
    await d.submit(gpuTasks('top', 'q', 14, { priority: 9, identity: { user: 'dave', queue: 'q', project: 'p1' } }));
    await d.job('top', running);
    await d.job('e1', (j) => j.status === 'pending');
    await d.complete('top');
    await d.job('e1', size(16));
    await d.complete('e1');
    const last = await d.input('muster.in.cancel', { jobId: 'nope' });
    await d.settle(last);
  },
};

/** A member's report as its agent sends it (contract v1.2): from its node, with its exit code and the attempt that started it. */
async function exits(d: WorkloadDriver, job: JobState, member: number, exitCode: number, attempt = job.attempt ?? 0): Promise<number> {
  return d.input(`muster.in.node.${job.members[member]!.node}.done`, { jobId: job.spec.id, member, ok: exitCode === 0, exitCode, attempt });
}

const onAttempt = (attempt: number) => (j: JobState) => j.status === 'running' && (j.attempt ?? 0) === attempt;

/**
 * Contract v1.2 (DESIGN.md §15) on a new log: rendezvous at every commit (two gangs whose member 0
 * share a node get distinct ports; a node with one port lends it to one gang at a time), a gang
 * restarted whole after a member exits 7 and failed after its restarts, a `fail` rule, an `ignore`
 * rule, a late report from a stopped attempt refused, a lost node restarting a gang without
 * counting, bad address, ports, failurePolicy and done bodies rejected.
 */
export const restarts: Workload = {
  name: 'restarts',
  description: 'v1.2: rendezvous ports (distinct per gang on a node, one-port node lent to one gang at a time); r (maxRestarts 1) restarted after exit 7 as attempt 1, a late attempt-0 report refused, failed after the second exit 7; f failed at once by a fail rule; i runs on after an ignored exit 3; l restarted without counting when its node is lost; bad address, ports, failurePolicy and exitCode rejected',
  replicas: ['s1'],
  async run(d) {
    const node = (id: string, more: Record<string, unknown> = {}) => ({ ...cpuNode(id, 'a'), address: `${id}.cluster.local`, ...more });
    for (const n of [node('c1'), node('c2'), node('c3'), node('one', { labels: { zone: 'one' }, ports: { from: 31000, to: 31000 } })]) await d.register(n);
    await d.input('muster.in.node.bad.register', { ...cpuNode('bad', 'a'), address: 'not a host' });
    await d.input('muster.in.node.bad.register', { ...cpuNode('bad', 'a'), ports: { from: 2, to: 1 } });
    await d.submit(tasks('bad-policy', 1, { failurePolicy: { maxRestarts: 101 } }));
    const policy = (more: Record<string, unknown>) => ({ failurePolicy: { backoffMs: 300, ...more } });
    await d.submit(tasks('r', 3, { placement: { policy: 'spread' }, select: "zone == 'a'", ...policy({ maxRestarts: 1 }) }));
    await d.submit(tasks('f', 2, { identity: { user: 'bob' }, select: "zone == 'a'", ...policy({ maxRestarts: 3, rules: [{ onExitCodes: [2], action: 'fail' }] }) }));
    await d.submit(tasks('i', 2, { identity: { user: 'carol' }, select: "zone == 'a'", ...policy({ rules: [{ onExitCodes: [3], action: 'ignore' }] }) }));
    await d.submit(tasks('p1', 1, { select: "zone == 'one'" }));
    for (const id of ['r', 'f', 'i', 'p1']) await d.job(id, running);
    await d.submit(tasks('p2', 1, { select: "zone == 'one'" }));
    await d.job('p2', (j) => j.pendReason?.hosts['no-rendezvous-port'] !== undefined);
    await d.complete('p1');
    await d.job('p2', running);
    await d.complete('p2');

    const r0 = await d.job('r', onAttempt(0));
    await d.input(`muster.in.node.${r0.members[0]!.node}.done`, { jobId: 'r', member: 0, ok: false, exitCode: 1.5 });
    await exits(d, r0, 1, 7);
    const r1 = await d.job('r', onAttempt(1));
    await exits(d, r1, 2, 7, 0);
    await exits(d, r1, 0, 7);
    await d.job('r', (j) => j.status === 'failed');

    await exits(d, await d.job('f', running), 1, 2);
    await d.job('f', (j) => j.status === 'failed');
    await exits(d, await d.job('i', running), 0, 3);
    await d.complete('i');

    await d.submit(tasks('l', 2, { identity: { user: 'dave' }, placement: { policy: 'spread' }, select: "zone == 'a'", ...policy({ maxRestarts: 0 }) }));
    const l0 = await d.job('l', onAttempt(0));
    await d.input(`muster.in.node.${l0.members[0]!.node}.lost`, {});
    await d.job('l', onAttempt(1));
    await d.complete('l');
    const last = await d.input('muster.in.cancel', { jobId: 'nope' });
    await d.settle(last);
  },
};

/** The workloads recorded as golden histories, by name. */
export const WORKLOADS: readonly Workload[] = [lifecycle, lossAndFailover, bigSession, markedCheckpoints, reservations, queues, elastic, restarts];
