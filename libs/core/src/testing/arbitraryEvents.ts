import fc from 'fast-check';
import type { AbortCategory, SchedulerEvent } from '../events.ts';
import type { JobSpec, NodeSpec } from '../contract/types.ts';

// fast-check arbitraries for well-formed events over a small id space, so that generated streams
// hit the interesting cases: unknown ids, repeats, releases without debits, out-of-order facts.

const nodeId = fc.constantFrom('n1', 'n2', 'n3', 'n4');
const jobId = fc.constantFrom('j1', 'j2', 'j3', 'j4', 'j5');
const role = fc.constantFrom('task', 'world', 'agent');
const small = fc.integer({ min: 0, max: 8 });
const resources = fc.record({ cpu: fc.integer({ min: 0, max: 4000 }), memoryMb: fc.integer({ min: 0, max: 4096 }), slots: small, gpus: small });
const gpuIds = fc.uniqueArray(fc.integer({ min: 0, max: 7 }), { maxLength: 4 }).map((ids) => [...ids].sort((a, b) => a - b));
const members = fc.uniqueArray(fc.integer({ min: 0, max: 7 }), { minLength: 1, maxLength: 4 }).map((m) => [...m].sort((a, b) => a - b));
const at = fc.integer({ min: 0, max: 1_000_000 });
const category = fc.constantFrom<AbortCategory>('insufficient-resources', 'no-matching-hosts', 'placement-unsatisfiable', 'node-lost', 'timeout', 'cancelled');

const nodeSpec: fc.Arbitrary<NodeSpec> = fc.record({
  id: nodeId,
  labels: fc.dictionary(fc.constantFrom('zone', 'gpu_model', 'rack'), fc.oneof(fc.constantFrom('a', 'b', 'A100'), fc.integer({ min: 0, max: 9 }))),
  capacity: fc.record({ cpu: fc.integer({ min: 0, max: 16000 }), memoryMb: fc.integer({ min: 0, max: 65536 }), slots: fc.option(small, { nil: undefined }) }),
  gpus: fc.integer({ min: 0, max: 8 }).map((n) => Array.from({ length: n }, (_, id) => ({ id, memoryMb: 81920, model: 'A100', nvlinkDomain: id < 4 ? 0 : 1 }))),
}).map((spec) => (spec.capacity.slots === undefined ? { ...spec, capacity: { cpu: spec.capacity.cpu, memoryMb: spec.capacity.memoryMb } } : spec));

const jobSpec: fc.Arbitrary<JobSpec> = fc.record({
  id: jobId,
  identity: fc.record({ user: fc.constantFrom('alice', 'bob'), queue: fc.constantFrom('default', 'gpu'), project: fc.constant('p1') }),
  priority: fc.integer({ min: -2, max: 2 }),
  roles: fc.array(fc.record({ name: role, count: fc.integer({ min: 1, max: 4 }), resources: fc.record({ cpu: fc.integer({ min: 0, max: 2000 }), memoryMb: fc.integer({ min: 0, max: 2048 }), gpus: fc.integer({ min: 0, max: 2 }), gpuMemoryMb: fc.constant(0) }) }), { minLength: 1, maxLength: 2 }),
  placement: fc.record({ policy: fc.constantFrom('pack' as const, 'spread' as const, 'same-node' as const), gpuLocality: fc.boolean() }),
  select: fc.constantFrom('', "zone == 'a'", 'cpu >= 1000', "gpu_model in ('A100','H100') && zone != 'b'"),
  minInstances: fc.constant(0),
});

/** Any one well-formed event of the catalogue, over a small space of ids. */
export const arbitraryEvent: fc.Arbitrary<SchedulerEvent> = fc.oneof(
  fc.record({ type: fc.constant('LeaderElected' as const), term: fc.integer({ min: 1, max: 5 }), leader: fc.constantFrom('s1', 's2') }),
  fc.record({ type: fc.constant('NodeRegistered' as const), v: fc.constant(1 as const), inputSeq: fc.nat(), node: nodeSpec }),
  fc.record({ type: fc.constant('NodeDrained' as const), inputSeq: fc.nat(), nodeId }),
  fc.record({ type: fc.constant('NodeLost' as const), nodeId, cause: fc.constantFrom('operator' as const, 'heartbeat' as const) }),
  fc.record({ type: fc.constant('JobSubmitted' as const), v: fc.constant(1 as const), inputSeq: fc.nat(), job: jobSpec, fingerprint: fc.constantFrom('f1', 'f2') }),
  fc.record({ type: fc.constant('JobRejected' as const), inputSeq: fc.nat(), jobId: fc.option(jobId, { nil: null }), reason: fc.record({ category: fc.constantFrom('invalid' as const, 'duplicate' as const), path: fc.constant('id'), message: fc.constant('bad') }) }),
  fc.record({ type: fc.constant('InputRejected' as const), inputSeq: fc.nat(), subject: fc.constant('muster.in.x'), reason: fc.record({ category: fc.constant('unknown' as const), path: fc.constant(''), message: fc.constant('unknown subject') }) }),
  fc.record({ type: fc.constant('JobCancelled' as const), inputSeq: fc.nat(), jobId }),
  fc.record({ type: fc.constant('JobClosed' as const), inputSeq: fc.nat(), jobId }),
  fc.record({ type: fc.constant('TaskCompleted' as const), inputSeq: fc.nat(), jobId, member: small, nodeId, ok: fc.boolean() }),
  fc.record({ type: fc.constant('SessionStarted' as const), session: fc.integer({ min: 1, max: 100 }), at }),
  fc.record({ type: fc.constant('HostDebited' as const), jobId, node: nodeId, role, members, resources, gpuIds }),
  fc.record({ type: fc.constant('DebitReversed' as const), jobId, node: nodeId, role, members, resources, gpuIds }),
  fc.record({ type: fc.constant('MemberBound' as const), jobId, member: small, node: nodeId, role, gpuIds }),
  fc.record({ type: fc.constant('GangCommitted' as const), jobId, session: small, at, allocations: fc.array(fc.record({ node: nodeId, role, members, gpuIds, resources: fc.record({ cpu: small, memoryMb: small, gpus: small }) }), { maxLength: 3 }) }),
  fc.record({ type: fc.constant('GangAborted' as const), jobId, session: small, at, final: fc.boolean(), reason: fc.record({ category, message: fc.constant('m'), hosts: fc.dictionary(fc.constantFrom('insufficient-cpu', 'select-mismatch'), small) }) }),
  fc.record({ type: fc.constant('JobPended' as const), jobId, at }),
  fc.record({ type: fc.constant('JobFinished' as const), jobId, at, outcome: fc.constantFrom('succeeded' as const, 'failed' as const, 'closed' as const) }),
  fc.record({ type: fc.constant('AllocationReleased' as const), jobId, node: nodeId, role, members, resources, gpuIds, cause: fc.constantFrom('completed' as const, 'cancelled' as const, 'closed' as const, 'node-lost' as const) }),
  fc.record({ type: fc.constant('JobsRetired' as const), at, retainMs: fc.constantFrom(0, 1000), jobIds: fc.array(jobId, { maxLength: 3 }) }),
  fc.record({ type: fc.constant('Checkpoint' as const), seq: fc.nat(), stateHash: fc.constant('0'.repeat(64)) }),
);

/** A stream of well-formed events. */
export function arbitraryEvents(maxLength = 200): fc.Arbitrary<SchedulerEvent[]> {
  return fc.array(arbitraryEvent, { maxLength });
}
