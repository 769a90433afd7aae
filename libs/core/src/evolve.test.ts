import fc from 'fast-check';
import { produce } from 'immer';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical.ts';
import type { LoggedTransaction } from './envelope.ts';
import type { SchedulerEvent } from './events.ts';
import { apply, applyTransaction, evolve, fold, foldTransactions } from './evolve.ts';
import { shardLeaf, shardLeaves, shardOf } from './shard.ts';
import type { State } from './state.ts';
import { STATE_SCHEMA, initialState } from './state.ts';
import { stateHash } from './stateHash.ts';
import { arbitraryEvent, arbitraryEvents } from './testing/arbitraryEvents.ts';

/** The reference driver: one immer `produce` running `apply` over every event. */
function produceAll(state: State, events: readonly SchedulerEvent[]): State {
  return produce(state, (draft) => {
    for (const event of events) apply(draft, event);
  });
}

/**
 * One gang's life as a leader writes it (register the host, submit, debit, bind every member,
 * commit), then one ending: every member done and released, one member done, the host lost and
 * the gang requeued, a cancel, or a failed attempt whose debit is reversed. Mixed with single
 * random events, these reach the paths uniform random events rarely do (a bound member completing).
 */
const arbitraryLifecycle: fc.Arbitrary<SchedulerEvent[]> = fc
  .record({
    job: fc.constantFrom('j1', 'j2', 'j3', 'j4', 'j5', 'j6'),
    size: fc.integer({ min: 1, max: 4 }),
    node: fc.constantFrom('n1', 'n2', 'n3', 'n4'),
    gpus: fc.boolean(),
    end: fc.constantFrom('finish', 'partial', 'lost', 'cancel', 'reverse'),
    inputSeq: fc.nat({ max: 1000 }),
  })
  .map(({ job, size, node, gpus, end, inputSeq }) => {
    const per = { cpu: 100, memoryMb: 10, slots: 1, gpus: gpus ? 1 : 0 };
    const members = Array.from({ length: size }, (_, m) => m);
    const gpuIds = (ms: number[]): number[] => (gpus ? ms : []);
    const times = (n: number) => ({ cpu: per.cpu * n, memoryMb: per.memoryMb * n, slots: n, gpus: per.gpus * n });
    const events: SchedulerEvent[] = [
      { type: 'NodeRegistered', v: 1, inputSeq, node: { id: node, labels: {}, capacity: { cpu: 4000, memoryMb: 4000 }, gpus: Array.from({ length: 8 }, (_, id) => ({ id, memoryMb: 1, model: 'A100', nvlinkDomain: 0 })) } },
      { type: 'JobSubmitted', v: 1, inputSeq: inputSeq + 1, fingerprint: `f${size}`, job: { id: job, identity: { user: 'alice', queue: 'q', project: 'p' }, priority: 0, roles: [{ name: 'task', count: size, resources: { cpu: per.cpu, memoryMb: per.memoryMb, gpus: per.gpus, gpuMemoryMb: 0 } }], placement: { policy: 'pack', gpuLocality: false }, select: '', minInstances: 0 } },
      { type: 'SessionStarted', session: inputSeq + 1, at: inputSeq },
    ];
    const debit = { jobId: job, node, role: 'task', members, resources: times(size), gpuIds: gpuIds(members) };
    if (end === 'reverse') {
      events.push({ type: 'HostDebited', ...debit }, { type: 'DebitReversed', ...debit });
      events.push({ type: 'GangAborted', jobId: job, session: inputSeq + 1, at: inputSeq, final: false, reason: { category: 'insufficient-resources', message: 'm', hosts: {} } });
      return events;
    }
    events.push({ type: 'HostDebited', ...debit });
    for (const m of members) events.push({ type: 'MemberBound', jobId: job, member: m, node, role: 'task', gpuIds: gpuIds([m]) });
    events.push({ type: 'GangCommitted', jobId: job, session: inputSeq + 1, at: inputSeq, allocations: [{ node, role: 'task', members, gpuIds: gpuIds(members), resources: { cpu: per.cpu * size, memoryMb: per.memoryMb * size, gpus: per.gpus * size } }] });
    const release = (ms: number[], cause: 'completed' | 'cancelled' | 'node-lost'): SchedulerEvent => ({ type: 'AllocationReleased', jobId: job, node, role: 'task', members: ms, resources: times(ms.length), gpuIds: gpuIds(ms), cause });
    if (end === 'finish' || end === 'partial') {
      for (const m of end === 'finish' ? members : [0]) {
        events.push({ type: 'TaskCompleted', inputSeq: inputSeq + 2 + m, jobId: job, member: m, nodeId: node, ok: true }, release([m], 'completed'));
      }
      if (end === 'finish') events.push({ type: 'JobFinished', jobId: job, at: inputSeq, outcome: 'succeeded' });
    } else if (end === 'lost') {
      events.push({ type: 'NodeLost', nodeId: node, cause: 'heartbeat' }, release(members, 'node-lost'));
      events.push({ type: 'GangAborted', jobId: job, session: inputSeq + 1, at: inputSeq, final: false, reason: { category: 'node-lost', message: 'm', hosts: {} } });
      events.push({ type: 'JobPended', jobId: job, at: inputSeq });
    } else {
      events.push({ type: 'JobCancelled', inputSeq: inputSeq + 2, jobId: job }, release(members, 'cancelled'));
      events.push({ type: 'GangAborted', jobId: job, session: inputSeq + 1, at: inputSeq, final: true, reason: { category: 'cancelled', message: 'm', hosts: {} } });
    }
    return events;
  });

/** Gang lifecycles mixed with single random events. */
function arbitraryMixed(maxChunks = 30): fc.Arbitrary<SchedulerEvent[]> {
  return fc
    .array(fc.oneof({ weight: 1, arbitrary: arbitraryLifecycle }, { weight: 3, arbitrary: arbitraryEvent.map((e) => [e]) }), { maxLength: maxChunks })
    .map((chunks) => chunks.flat());
}

/** A base state three ways: frozen by immer, made by a fold, or private and mutable (in place). */
const arbitraryBase = fc.tuple(arbitraryMixed(20), fc.constantFrom('immer', 'fold', 'private')).map(([events, how]) => {
  if (how === 'immer') return produceAll(initialState(), events);
  if (how === 'fold') return fold(initialState(), events);
  const state = initialState();
  for (const event of events) apply(state, event);
  return state;
});

describe('evolve and fold', () => {
  it('never throw on a generated stream of well-formed events', () => {
    fc.assert(
      fc.property(arbitraryEvents(), (events) => {
        let state = initialState();
        for (const event of events) state = evolve(state, event);
        expect(state.schema).toBe(STATE_SCHEMA);
      }),
      { numRuns: 300 },
    );
  });

  it('fold gives byte for byte the canonical state of one produce over the same events, from any base', () => {
    fc.assert(
      fc.property(arbitraryBase, arbitraryMixed(), (base, events) => {
        expect(canonicalJson(fold(base, events))).toBe(canonicalJson(produceAll(base, events)));
      }),
      { numRuns: 300 },
    );
  });

  it('every driver agrees: fold in batches, evolve one by one, produce, and apply in place', () => {
    fc.assert(
      fc.property(arbitraryMixed(), fc.nat(), (events, cutAt) => {
        const cut = events.length === 0 ? 0 : cutAt % events.length;
        const batched = fold(fold(initialState(), events.slice(0, cut)), events.slice(cut));
        let stepwise = initialState();
        for (const event of events) stepwise = evolve(stepwise, event);
        const inPlace = initialState();
        for (const event of events) apply(inPlace, event);
        const expected = canonicalJson(produceAll(initialState(), events));
        expect(canonicalJson(batched)).toBe(expected);
        expect(canonicalJson(stepwise)).toBe(expected);
        expect(canonicalJson(inPlace)).toBe(expected);
      }),
      { numRuns: 200 },
    );
  });

  it('fold never changes the state it was given (frozen by immer, made by fold, or private)', () => {
    fc.assert(
      fc.property(arbitraryBase, arbitraryMixed(), (base, events) => {
        const before = canonicalJson(base);
        fold(base, events);
        fold(base, events);
        expect(canonicalJson(base)).toBe(before);
      }),
      { numRuns: 300 },
    );
  });

  it('a frozen base really is frozen, so a stray write to a shared object would throw', () => {
    const events = fc.sample(arbitraryEvent, { numRuns: 300, seed: 3 });
    const base = produceAll(initialState(), events);
    const leaf = shardLeaves(base.jobs)[0]?.[1];
    expect(leaf).toBeDefined();
    expect(Object.isFrozen(base)).toBe(true);
    expect(Object.isFrozen(base.jobs)).toBe(true);
    expect(Object.isFrozen(leaf)).toBe(true);
    expect(() => {
      (leaf as unknown[]).push('x');
    }).toThrow(TypeError);
  });

  it('fold shares everything it did not touch with its input', () => {
    const events = fc.sample(arbitraryEvent, { numRuns: 500, seed: 11 });
    const base = produceAll(initialState(), events);
    // a checkpoint touches only the root: every table is the input's own object
    const next = fold(base, [{ type: 'Checkpoint', seq: 9, stateHash: 'h' }]);
    expect(next).not.toBe(base);
    expect(next.nodes).toBe(base.nodes);
    expect(next.jobs).toBe(base.jobs);
    expect(next.pending).toBe(base.pending);
    expect(next.usage).toBe(base.usage);
    // a drain of n1 copies the path down to n1 and nothing beside it
    const drained = fold(base, [{ type: 'NodeDrained', inputSeq: 1, nodeId: 'n1' }]);
    expect(drained.jobs).toBe(base.jobs);
    const n1 = shardOf('n1');
    for (const id of ['n2', 'n3', 'n4']) {
      const n = shardOf(id);
      if (n >>> 8 !== n1 >>> 8) expect(drained.nodes[n >>> 8]).toBe(base.nodes[n >>> 8]);
      if (n !== n1) expect(shardLeaf(drained.nodes, n)).toBe(shardLeaf(base.nodes, n));
    }
  });

  it('an empty batch returns the same state', () => {
    const base = fold(initialState(), fc.sample(arbitraryEvent, { numRuns: 50, seed: 5 }));
    expect(fold(base, [])).toBe(base);
    expect(foldTransactions(base, [])).toBe(base);
  });

  it('foldTransactions equals applyTransaction under one produce', () => {
    const arbitraryTxs = fc.array(fc.tuple(arbitraryEvents(20), fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 4 })), { maxLength: 12 }).map((parts) =>
      parts.map(([events, at, term], i): LoggedTransaction => ({
        seq: i + 1,
        tx: { v: 1, kind: 'fact', term, leader: 's1', at, prev: null, session: 0, part: 1, parts: 1, events },
      })),
    );
    fc.assert(
      fc.property(arbitraryTxs, (txs) => {
        const expected = produce(initialState(), (draft) => {
          for (const { seq, tx } of txs) applyTransaction(draft, seq, tx);
        });
        expect(canonicalJson(foldTransactions(initialState(), txs))).toBe(canonicalJson(expected));
      }),
      { numRuns: 100 },
    );
  });

  it('folding the same 10,000 generated events twice gives byte-identical canonical state', () => {
    const events = fc.sample(arbitraryEvent, { numRuns: 10_000, seed: 42 });
    expect(events).toHaveLength(10_000);
    const a = canonicalJson(fold(initialState(), events));
    const b = canonicalJson(fold(initialState(), events));
    expect(b).toBe(a);
    expect(stateHash(fold(fold(initialState(), events.slice(0, 5000)), events.slice(5000)))).toBe(stateHash(fold(initialState(), events)));
  });

  it('treats ids that are Object.prototype names as ordinary ids', () => {
    const spec = { id: 'constructor', identity: { user: 'toString', queue: 'valueOf', project: 'p' }, priority: 0, roles: [{ name: 'task', count: 1, resources: { cpu: 100, memoryMb: 1, gpus: 0, gpuMemoryMb: 0 } }], placement: { policy: 'pack' as const, gpuLocality: false }, select: '', minInstances: 0 };
    const node = { id: 'hasOwnProperty', labels: {}, capacity: { cpu: 1000, memoryMb: 100 }, gpus: [] };
    const state = fold(initialState(), [
      { type: 'NodeRegistered', v: 1, inputSeq: 1, node },
      { type: 'JobSubmitted', v: 1, inputSeq: 2, job: spec, fingerprint: 'f' },
      { type: 'HostDebited', jobId: 'constructor', node: 'hasOwnProperty', role: 'task', members: [0], resources: { cpu: 100, memoryMb: 1, slots: 1, gpus: 0 }, gpuIds: [] },
      { type: 'MemberBound', jobId: 'constructor', member: 0, node: 'hasOwnProperty', role: 'task', gpuIds: [] },
      { type: 'GangCommitted', jobId: 'constructor', session: 1, at: 5, allocations: [{ node: 'hasOwnProperty', role: 'task', members: [0], gpuIds: [], resources: { cpu: 100, memoryMb: 1, gpus: 0 } }] },
    ]);
    expect(canonicalJson(state.usage)).toBe('{"queues":{"valueOf":{"cpu":100,"gpus":0,"memoryMb":1}},"users":{"toString":{"cpu":100,"gpus":0,"memoryMb":1}}}');
    const job = shardLeaf(state.jobs, shardOf('constructor'))![0]!;
    expect(job.status).toBe('running');
    expect(shardLeaf(state.nodes, shardOf('hasOwnProperty'))![0]!.jobs).toEqual({ constructor: 1 });
  });
});
