import { describe, expect, it } from 'vitest';
import type { StoredDecision } from '@muster/bus';
import { TurnContext, canonicalJson, ingest, initialState, turn, validateJobSpec } from '@muster/core';
import type { GangAborted, GangCommitted, LoggedTransaction, SchedulerEvent, State, TransactionKind, TurnCommand } from '@muster/core';
import type { InputMessage } from '@muster/bus';
import { checkDecisions, lostJobs, nodeChurn } from './drillDecisions.ts';
import type { FaultRecord } from './drillFaultRecord.ts';
import { drillJob } from './drillJobs.ts';
import { checkLiveness } from './drillLiveness.ts';
import { drillRandom } from './drillRandom.ts';
import { replayLog, unreleased } from './drillReplay.ts';
import { electionsLogged, leaseWins } from './drillLeaseWins.ts';
import { spread, takeovers } from './drillTakeover.ts';
import { checkClock } from './drillClock.ts';
import { numbersByKind } from './drillByKind.ts';

interface Step {
  at: number;
  events: SchedulerEvent[];
  leader?: string;
  kind?: TransactionKind;
}

/** A log of the given transactions, numbered from 1 (the drill's checks read events, times and leaders). */
function logOf(steps: Step[]): LoggedTransaction[] {
  return steps.map((s, i) => ({
    seq: i + 1,
    tx: { v: 1, kind: s.kind ?? 'session', term: 1, leader: s.leader ?? 's1', at: s.at, prev: null, session: 1, part: 1, parts: 1, events: s.events },
  }));
}

const commit = (jobId: string, at = 1): GangCommitted => ({ type: 'GangCommitted', jobId, session: 1, at, allocations: [] });
const abort = (jobId: string, final: boolean, category: GangAborted['reason']['category'] = 'timeout'): GangAborted => ({
  type: 'GangAborted',
  jobId,
  session: 1,
  at: 1,
  final,
  reason: { category, message: '', hosts: {} },
});
const submitted = (id: string, inputSeq = 1): SchedulerEvent => ({ type: 'JobSubmitted', v: 1, inputSeq, fingerprint: 'f', job: { id } as never });
const onStream = (log: LoggedTransaction[], seq: number, index: number, extra: Partial<StoredDecision> = {}): StoredDecision => {
  const event = log[seq - 1]?.tx.events[index] as GangCommitted | GangAborted;
  return { seq: 0, subject: `muster.decision.${event.jobId}`, msgId: `muster:${seq}:${index}`, logSeq: seq, data: canonicalJson(event), ...extra };
};

const node = { id: 'n1', labels: {}, capacity: { cpu: 4_000, memoryMb: 4_096, slots: 8 }, gpus: [] };
const job = (id: string, cpu: number) => ({ id, identity: { user: 'alice' }, tasks: 2, resources: { cpu, memoryMb: 256 } });
const input = (seq: number, subject: string, body: unknown, storedAt: number): InputMessage => {
  const data = JSON.stringify(body);
  return { seq, subject, data, size: data.length, storedAt };
};

const submitInput = (seq: number, id: string): InputMessage => input(seq, 'muster.in.submit', { id }, seq);
const read = (log: LoggedTransaction[], stream: StoredDecision[], ids: string[]) => ({ inputs: ids.map((id, i) => submitInput(i + 1, id)), stream, log });

describe('drill: decisions, lost, duplicated, contradicted', () => {
  it('finds nothing wrong when every accepted job was ingested, decided once in the log and published as logged', () => {
    const log = logOf([{ at: 1, events: [submitted('j1', 1), submitted('j2', 2)] }, { at: 2, events: [commit('j1'), abort('j2', false, 'insufficient-resources')] }, { at: 3, events: [commit('j2')] }]);
    const stream = [onStream(log, 2, 0), onStream(log, 2, 1), onStream(log, 3, 0)];
    const f = checkDecisions(['j1', 'j2'], read(log, stream, ['j1', 'j2']));
    expect(lostJobs(f)).toEqual([]);
    expect(f.duplicated).toEqual([]);
    expect(f.contradicted).toEqual([]);
    expect(f.neverCommitted).toEqual([]);
    expect([f.decisionsInLog, f.decisionsOnStream, f.lastPublishedLogSeq, f.lastInputSeq]).toEqual([3, 3, 3, 2]);
  });

  it('counts a job as lost when it is not in MUSTER_IN, skipped at ingest, or its decision is missing though later ones are published', () => {
    const log = logOf([{ at: 1, events: [submitted('j1', 1), submitted('j3', 3)] }, { at: 2, events: [commit('j1'), commit('j3')] }, { at: 3, events: [abort('j9', false, 'insufficient-resources')] }]);
    const inputs = [submitInput(1, 'j1'), submitInput(2, 'j2'), submitInput(3, 'j3')];
    const f = checkDecisions(['j1', 'j2', 'j3', 'j4'], { inputs, stream: [onStream(log, 2, 0), onStream(log, 3, 0)], log });
    expect(lostJobs(f)).toEqual(['j2', 'j3', 'j4']);
    expect(f.lost).toEqual([
      'j2: MUSTER_IN 2 ingested (log at input 3) with no JobSubmitted',
      'j3: decision muster:2:1 not on MUSTER_DECISIONS, though later ones are',
      'j4: acknowledged but not in MUSTER_IN',
    ]);
  });

  it('counts work still queued as backlog, not lost: inputs after the last ingested, pending jobs, decisions after the last published', () => {
    const log = logOf([{ at: 1, events: [submitted('j1', 1), submitted('j2', 2)] }, { at: 2, events: [commit('j1')] }, { at: 3, events: [commit('j2')] }, { at: 4, events: [submitted('j3', 3)] }]);
    const inputs = [submitInput(1, 'j1'), submitInput(2, 'j2'), submitInput(3, 'j3'), submitInput(4, 'j4')];
    const f = checkDecisions(['j1', 'j2', 'j3', 'j4'], { inputs, stream: [onStream(log, 2, 0)], log });
    expect(f.lost).toEqual([]);
    expect(f.backlog).toEqual({ notIngested: ['j4'], pending: ['j3'], unpublished: ['j2'] });
    expect(f.neverCommitted).toEqual(['j3', 'j4']);
  });

  it('read while the leader publishes a big transaction over several calls: its decisions after the last one published are queued, a gap before it is lost', () => {
    const log = logOf([{ at: 1, events: [submitted('j1', 1), submitted('j2', 2), submitted('j3', 3)] }, { at: 2, events: [commit('j1'), commit('j2'), commit('j3')] }]);
    const ids = ['j1', 'j2', 'j3'];
    // published so far: the first two of transaction 2 (a bind of the second, too)
    const midway = checkDecisions(ids, read(log, [onStream(log, 2, 0), onStream(log, 2, 1), { ...onStream(log, 2, 1), subject: 'muster.bind.n1', msgId: 'muster:2:1:n1' }], ids));
    expect(midway.lost).toEqual([]);
    expect(midway.backlog.unpublished).toEqual(['j3']);
    // a gap: the first and the third published, not the second
    const gap = checkDecisions(ids, read(log, [onStream(log, 2, 0), onStream(log, 2, 2)], ids));
    expect(gap.lost).toEqual(['j2: decision muster:2:1 not on MUSTER_DECISIONS, though later ones are']);
  });

  it('finds a second commit of a running gang, a msg id stored twice, and more commits on the stream than in the log', () => {
    const log = logOf([{ at: 1, events: [submitted('j1', 1)] }, { at: 2, events: [commit('j1')] }, { at: 3, events: [commit('j1')] }]);
    const twice = onStream(log, 2, 0);
    const f = checkDecisions(['j1'], read(log, [twice, { ...twice, seq: 7 }, onStream(log, 3, 0), onStream(log, 3, 0, { msgId: 'muster:3:0', seq: 9 })], ['j1']));
    expect(f.duplicated.some((d) => d.includes('committed again at log 3'))).toBe(true);
    expect(f.duplicated.some((d) => d.startsWith('muster:2:0: stored twice'))).toBe(true);
    expect(f.duplicated.some((d) => d.includes('4 commits on MUSTER_DECISIONS, 2 in the log'))).toBe(true);
  });

  it('a commit after a node-lost requeue is not a duplicate', () => {
    const log = logOf([{ at: 1, events: [submitted('j1', 1)] }, { at: 2, events: [commit('j1')] }, { at: 3, events: [abort('j1', false, 'node-lost')] }, { at: 4, events: [commit('j1')] }]);
    expect(checkDecisions(['j1'], read(log, [], ['j1'])).duplicated).toEqual([]);
  });

  it('finds contradictions: a committed gang finally aborted, two bodies under one msg id, a stream body unlike its log event, a decision past the end of a log read after it', () => {
    const log = logOf([{ at: 1, events: [submitted('j1', 1), submitted('j2', 2)] }, { at: 2, events: [commit('j1'), commit('j2')] }, { at: 3, events: [abort('j1', true)] }]);
    const first = onStream(log, 2, 1);
    const past = { ...onStream(log, 2, 0), seq: 6, msgId: 'muster:4:0', logSeq: 4 };
    const f = checkDecisions(['j1', 'j2'], read(log, [first, { ...first, seq: 5, data: canonicalJson(commit('j2', 99)) }, past], ['j1', 'j2']));
    expect(f.contradicted.some((c) => c.startsWith('j1: final abort (timeout) at log 3'))).toBe(true);
    expect(f.contradicted.some((c) => c.startsWith('muster:2:1: two different bodies'))).toBe(true);
    expect(f.contradicted.some((c) => c.includes('differs from log 2 event 1'))).toBe(true);
    expect(f.contradicted.some((c) => c.includes('names log 4, past the end (3) of a log read after it'))).toBe(true);
  });
});

describe('drill: nodes lost and registered again', () => {
  it('counts losses by cause and the registers of nodes already registered', () => {
    const registered = (id: string, inputSeq: number): SchedulerEvent => ({ type: 'NodeRegistered', v: 1, inputSeq, node: { ...node, id } });
    const log = logOf([
      { at: 1, kind: 'ingest', events: [registered('n1', 1), registered('n2', 2)] },
      { at: 2, kind: 'fact', events: [{ type: 'NodeLost', nodeId: 'n1', cause: 'heartbeat' }, { type: 'NodeLost', nodeId: 'n2', cause: 'heartbeat' }] },
      { at: 3, kind: 'ingest', events: [registered('n1', 3), { type: 'NodeLost', inputSeq: 4, nodeId: 'n1', cause: 'operator' }] },
    ]);
    expect(nodeChurn(log)).toEqual({ lostByHeartbeat: 2, lostByOperator: 1, registeredAgain: 1 });
  });
});

describe('drill: a stop at the runtime limit', () => {
  // j committed at 1,000 with two members and a limit of 5,000 ms, stopped at its limit at 6,000
  const member = (m: number) => ({ node: 'n1', role: 'main', members: [m], resources: { cpu: 1, memoryMb: 1, slots: 1, gpus: 0 }, gpuIds: [] });
  const log = logOf([
    { at: 1, events: [{ type: 'JobSubmitted', v: 1, inputSeq: 1, fingerprint: 'f', job: { id: 'j', runtimeLimitMs: 5_000 } as never }] },
    { at: 1_000, events: [{ type: 'GangCommitted', jobId: 'j', session: 1, at: 1_000, allocations: [member(0), member(1)] }] },
    { at: 6_000, events: [{ ...abort('j', true, 'runtime-limit'), at: 6_000 }] },
  ]);
  const done = (seq: number, m: number, storedAt: number) => input(seq, 'muster.in.node.n1.done', { jobId: 'j', member: m, ok: true }, storedAt);

  it('contradicts the completions when every member\'s was stored well before the limit', () => {
    const f = checkDecisions(['j'], { inputs: [submitInput(1, 'j'), done(2, 0, 2_000), done(3, 1, 4_500)], stream: [], log });
    expect(f.contradicted).toEqual(['j: stopped at its runtime limit at log 3 (limit 6000), though every member\'s completion was stored in MUSTER_IN by then']);
    expect(f.unfinished).toEqual([]);
  });

  it('is an unfinished gang, not a contradiction, when a member did not report before it (or only within the tolerance, or after)', () => {
    for (const late of [[done(3, 1, 5_500)], [done(3, 1, 7_000)], []]) {
      const f = checkDecisions(['j'], { inputs: [submitInput(1, 'j'), done(2, 0, 2_000), ...late], stream: [], log });
      expect(f.contradicted).toEqual([]);
      expect(f.unfinished).toEqual(['j: stopped at its runtime limit at log 3 with 1 of 2 members not reported done before it']);
    }
  });

  it('does not count a member\'s report from before the commit (a run before a requeue)', () => {
    const f = checkDecisions(['j'], { inputs: [submitInput(1, 'j'), done(2, 0, 500), done(3, 1, 2_000)], stream: [], log });
    expect(f.unfinished).toHaveLength(1);
  });
});

describe('drill: takeover times', () => {
  const fault = (n: number, kind: FaultRecord['kind'], target: string, at: number): FaultRecord => ({ n, kind, target, at, endedAt: at, skipped: null, error: null, nextLeader: null });

  it('measures from the fault to the first election and the first decision by another replica, and says when nobody took over', () => {
    const log = logOf([
      { at: 900, leader: 's1', events: [commit('a')] },
      { at: 1_500, leader: 's2', kind: 'election', events: [{ type: 'LeaderElected', term: 2, leader: 's2' }] },
      { at: 1_600, leader: 's2', kind: 'ingest', events: [] },
      { at: 1_800, leader: 's2', events: [commit('b')] },
      { at: 5_400, leader: 's3', kind: 'election', events: [{ type: 'LeaderElected', term: 3, leader: 's3' }] },
      { at: 5_700, leader: 's3', events: [commit('c')] },
      { at: 9_300, leader: 's1', kind: 'election', events: [{ type: 'LeaderElected', term: 4, leader: 's1' }] },
      { at: 9_400, leader: 's2', kind: 'election', events: [{ type: 'LeaderElected', term: 5, leader: 's2' }] },
      { at: 9_900, leader: 's2', events: [commit('d')] },
    ]);
    const faults = [fault(1, 'kill-leader', 's1', 1_000), fault(2, 'restart-nats', 'n1', 2_000), fault(3, 'pause-leader', 's2', 5_000), fault(4, 'kill-leader', 's3', 9_000), fault(5, 'kill-leader', 's2', 20_000)];
    const t = takeovers(faults, log);
    expect(t.map((x) => [x.fault, x.from, x.to, x.electedMs, x.decisionMs])).toEqual([
      [1, 's1', 's2', 500, 800],
      [3, 's2', 's3', 400, 700],
      // s1 won the log first and lost it to s2 before deciding: s2's decision ends the takeover
      [4, 's3', 's2', 300, 900],
      [5, 's2', null, null, null],
    ]);
    expect(spread(t.map((x) => x.decisionMs))).toEqual({ count: 3, p50: 800, p99: 900, max: 900 });
    expect(spread([])).toEqual({ count: 0, p50: null, p99: null, max: null });
  });
});

/** The log a leader would write for these inputs, each ingested at its stored time by a turn of the core; `decideAt` adds sessions. */
function ingestedLog(inputs: InputMessage[], decideAt: number[] = []): LoggedTransaction[] {
  const context = new TurnContext();
  let state: State = initialState();
  let lastHash: string | null = null;
  const log: LoggedTransaction[] = [];
  const times = [...inputs.map((i) => ({ at: i.storedAt ?? 0, input: i })), ...decideAt.map((at) => ({ at, input: null }))].sort((a, b) => a.at - b.at);
  for (const { at, input: i } of times) {
    const command: TurnCommand = i === null ? { session: true } : { inputs: [{ seq: i.seq, subject: i.subject, data: i.data }] };
    const result = turn(context, state, lastHash, [command], { term: 1, leader: 's1', at });
    state = result.state;
    lastHash = result.lastHash;
    log.push(...result.transactions.map(({ seq, tx }) => ({ seq, tx })));
  }
  return log;
}

describe('drill: liveness', () => {
  const register = input(1, 'muster.in.node.n1.register', node, 1_000);

  it('flags a gap over the bound while a job that fits waits in the log', () => {
    const inputs = [register, input(2, 'muster.in.submit', job('j1', 1_000), 2_000)];
    const r = checkLiveness(ingestedLog(inputs), inputs, { from: 0, to: 20_000 }, 10_000);
    expect(r.violations).toEqual([{ from: 0, to: 20_000, ms: 20_000, attributableMs: 20_000, fitting: ['j1'] }]);
    expect(r.longestGapMs).toBe(20_000);
  });

  it('flags work stored in MUSTER_IN that no leader ingested', () => {
    const inputs = [register, input(2, 'muster.in.submit', job('j1', 1_000), 2_000)];
    const r = checkLiveness(ingestedLog([register]), inputs, { from: 0, to: 20_000 }, 10_000);
    expect(r.violations.map((v) => v.fitting)).toEqual([['j1']]);
  });

  it('does not count time when JetStream was down, and looks for fitting work where the attributable wait began', () => {
    const inputs = [register, input(2, 'muster.in.submit', job('j1', 1_000), 2_000)];
    const log = ingestedLog(inputs);
    const excused = [{ from: 4_000, to: 12_000 }];
    expect(checkLiveness(log, inputs, { from: 0, to: 20_000 }, 12_000, excused).violations).toEqual([]);
    const r = checkLiveness(log, inputs, { from: 0, to: 20_000 }, 10_000, excused);
    expect(r.longestAttributableMs).toBe(12_000);
    // the attributable wait began at 2000 (8000 ms after the outage, 2000 before it), when j1 was there
    expect(r.violations.map((v) => [v.attributableMs, v.fitting])).toEqual([[12_000, ['j1']]]);
    // submitted at 2500, j1 had not waited 10 s of JetStream time by the end of the gap
    const late = [register, input(2, 'muster.in.submit', job('j1', 1_000), 2_500)];
    expect(checkLiveness(ingestedLog(late), late, { from: 0, to: 20_000 }, 10_000, excused).violations).toEqual([]);
  });

  it('does not flag a long gap when the waiting job does not fit, nor a short one', () => {
    const tooBig = [register, input(2, 'muster.in.submit', job('j1', 3_000), 2_000)];
    expect(checkLiveness(ingestedLog(tooBig), tooBig, { from: 0, to: 20_000 }, 10_000).violations).toEqual([]);
    const fits = [register, input(2, 'muster.in.submit', job('j1', 1_000), 2_000)];
    const r = checkLiveness(ingestedLog(fits, [9_000]), fits, { from: 0, to: 12_000 }, 10_000);
    expect(r.violations).toEqual([]);
    expect(r.longestGapMs).toBe(9_000);
  });
});

describe('drill: replay', () => {
  it('finds a node over its capacity after a transaction, and use left behind when nothing runs', () => {
    const registered = ingest(initialState(), { seq: 1, subject: 'muster.in.node.n1.register', data: JSON.stringify(node) }, 1);
    const debit: SchedulerEvent = { type: 'HostDebited', jobId: 'j1', node: 'n1', role: 'task', members: [0], resources: { cpu: 5_000, memoryMb: 1, slots: 1, gpus: 0 }, gpuIds: [] };
    const log = logOf([{ at: 1, events: registered }, { at: 2, events: [debit] }]);
    const r = replayLog(log, new Set([1, 2]));
    expect(r.overcommits).toEqual(['log 2: n1 cpu 5000 > 4000']);
    expect([...r.hashes.keys()]).toEqual([1, 2]);
    expect(unreleased(r.final)).toEqual(['n1']);
    expect(replayLog(logOf([{ at: 1, events: registered }]), new Set()).overcommits).toEqual([]);
  });
});

describe('drill: workload', () => {
  it('draws the same valid JobSpecs from the same seed', () => {
    const a = drillRandom(7);
    const b = drillRandom(7);
    const specs = Array.from({ length: 50 }, (_, n) => drillJob('t', n, a));
    expect(Array.from({ length: 50 }, (_, n) => drillJob('t', n, b))).toEqual(specs);
    for (const spec of specs) expect(validateJobSpec(spec).ok, JSON.stringify(spec)).toBe(true);
    expect(new Set(specs.map((s) => ('roles' in s ? 'gpu' : 'cpu')))).toEqual(new Set(['gpu', 'cpu']));
  });
});

describe('drill: takeover split, numbers per kind, the clock', () => {
  const fault = (n: number, kind: FaultRecord['kind'], target: string, at: number, endedAt = at): FaultRecord => ({ n, kind, target, at, endedAt, skipped: null, error: null, nextLeader: null });
  const log = logOf([
    { at: 1_000, leader: 's1', events: [submitted('a', 1)] },
    { at: 7_000, leader: 's2', kind: 'election', events: [{ type: 'LeaderElected', term: 2, leader: 's2' }] },
    { at: 7_300, leader: 's2', events: [commit('a')] },
  ]);

  it('splits a takeover into JetStream\'s recovery and muster\'s own time', () => {
    const [t] = takeovers([fault(1, 'kill-leader', 's1', 1_500)], log, [{ from: 2_000, to: 7_000 }]);
    expect([t?.decisionMs, t?.jetStreamMs, t?.musterMs]).toEqual([5_800, 5_000, 800]);
  });

  it('splits a takeover into detection, rebuild and first decision along the replica that decided, naming the faults overlapping it', () => {
    const faults = [fault(1, 'kill-leader', 's1', 1_500, 2_000), fault(2, 'restart-nats', 'n2', 3_000, 9_000), fault(3, 'restart-standby', 's3', 8_000, 8_500)];
    const wins = new Map([['s2', leaseWins(['{"level":30,"time":900,"msg":"took the free lease"}', '{"level":30,"time":2100,"component":"lease","msg":"took over the lease","from":"s1"}', '{"level":30,"time":2200,"msg":"elected: leading"}'].join('\n'))]]);
    const [t] = takeovers(faults, log, [{ from: 3_000, to: 6_000 }], (id) => wins.get(id) ?? []);
    expect([t?.detectionMs, t?.rebuildMs, t?.firstDecisionMs, t?.jetStreamMs]).toEqual([600, 4_900, 300, 3_000]);
    expect(t?.overlapping).toEqual(['2 restart-nats n2']);
  });

  it('times an election by the line its replica logged when it landed, not by its stamp, which can trail the clock on a loaded machine', () => {
    // s2's stamps trail the clock by 3 s: its election is stamped before the pause (7,500) that it answered
    const lagging = logOf([
      { at: 1_000, leader: 's1', events: [submitted('a', 1)] },
      { at: 5_000, leader: 's2', kind: 'election', events: [{ type: 'LeaderElected', term: 2, leader: 's2' }] },
      { at: 5_200, leader: 's2', events: [commit('a')] },
    ]);
    const s2 = ['{"level":30,"time":7900,"component":"lease","msg":"took over the lease","from":"s1"}', '{"level":30,"time":8000,"replica":"s2","term":2,"component":"append","seq":2,"msg":"elected: leading"}'].join('\n');
    const pause = [fault(1, 'pause-leader', 's1', 7_500, 10_000)];
    expect(takeovers(pause, lagging, [])[0]?.decisionMs).toBeNull();
    const [t] = takeovers(pause, lagging, [], (id) => (id === 's2' ? leaseWins(s2) : []), (id) => (id === 's2' ? electionsLogged(s2) : new Map()));
    expect([t?.to, t?.electedMs, t?.decisionMs, t?.detectionMs, t?.rebuildMs, t?.firstDecisionMs]).toEqual(['s2', 500, 700, 400, 100, 200]);
    // a replica whose clock runs an hour fast logs its own time: its line is not believed, the stamp stands
    const fast = ['{"level":30,"time":3608000,"replica":"s2","term":2,"component":"append","seq":2,"msg":"elected: leading"}'].join('\n');
    expect(takeovers([fault(1, 'kill-leader', 's1', 4_000)], lagging, [], () => [], (id) => (id === 's2' ? electionsLogged(fast) : new Map()))[0]?.decisionMs).toBe(1_200);
  });

  it('times the fast-clock fault\'s takeover by its replica\'s lines brought back by the offset, though its stamp trails the kill', () => {
    // s2 runs an hour fast and takes over from the kill of s1 at 7,500; its stamps are held to the log's time (5,000)
    const lagging = logOf([
      { at: 1_000, leader: 's1', events: [submitted('a', 1)] },
      { at: 5_000, leader: 's2', kind: 'election', events: [{ type: 'LeaderElected', term: 2, leader: 's2' }] },
      { at: 5_200, leader: 's2', events: [commit('a')] },
    ]);
    const hour = 3_600_000;
    const s2 = [`{"level":30,"time":${hour + 7_900},"component":"lease","msg":"took over the lease","from":"s1"}`, `{"level":30,"time":${hour + 8_000},"replica":"s2","term":2,"component":"append","seq":2,"msg":"elected: leading"}`].join('\n');
    const fast: FaultRecord = { ...fault(1, 'fast-clock', 's2', 6_000, 20_000), fastClock: { replica: 's2', aheadMs: hour, from: 6_500, to: 15_000, led: true, toSeq: 3, killed: 's1', killedAt: 7_500 } };
    const [t] = takeovers([fast], lagging, [], (id) => (id === 's2' ? leaseWins(s2) : []), (id) => (id === 's2' ? electionsLogged(s2) : new Map()));
    expect([t?.from, t?.to, t?.electedMs, t?.decisionMs, t?.detectionMs, t?.rebuildMs]).toEqual(['s1', 's2', 500, 700, 400, 100]);
    // without the window (another replica's lines an hour off), the line is not believed: no takeover found
    expect(takeovers([{ ...fast, fastClock: { ...fast.fastClock!, replica: 's3' } }], lagging, [], (id) => (id === 's2' ? leaseWins(s2) : []), (id) => (id === 's2' ? electionsLogged(s2) : new Map()))[0]?.decisionMs).toBeNull();
  });

  it('gives each kind its count, takeovers and the findings that fall in its windows', () => {
    const faults = [fault(1, 'kill-leader', 's1', 1_500, 2_000), fault(2, 'restart-standby', 's3', 20_000, 21_000)];
    const t = takeovers(faults, log, []);
    const k = numbersByKind(faults, t, log, { lost: [], duplicated: ['a: committed again at log 3 without a requeue'], contradicted: [], overcommit: [] }, new Set(['a']));
    expect(k.map((x) => [x.kind, x.injected, x.takeover.total.max, x.duplicated, x.committed])).toEqual([
      ['kill-leader', 1, 5_800, 1, 1],
      ['restart-standby', 1, null, 0, 0],
    ]);
  });

  it('flags a stamp ahead of true time: in the log when a fast-clock window ended, or when the drill read it', () => {
    const fast = { ...fault(1, 'fast-clock', 's2', 500), fastClock: { replica: 's2', aheadMs: 3_600_000, from: 600, to: 8_000, led: true, toSeq: 3, killed: 's1', killedAt: 1_000 } };
    const ok = checkClock(log, [fast], 9_000);
    expect([ok.jumps, ok.fastStamps, ok.maxAheadMs]).toEqual([[], 2, -700]);
    const jumped = logOf([{ at: 1_000, events: [] }, { at: 3_607_000, leader: 's2', events: [] }, { at: 3_607_300, leader: 's2', events: [] }]);
    expect(checkClock(jumped, [fast], 9_000).jumps[0]).toBe("log 2 (s2): stamped 3599000 ms ahead of the drill's clock");
    expect(checkClock(jumped, [], 3_700_000).jumps).toEqual([]);
  });
});
