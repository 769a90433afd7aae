import type { z } from 'zod';
import type { policySpecSchema } from './policySpecSchema.ts';

/** Resources one member of a role asks for (cpu in millicores; GPUs are whole devices). */
export interface MemberResources {
  cpu: number;
  memoryMb: number;
  gpus: number;
  /** Least free memory each of the member's GPU devices must have. */
  gpuMemoryMb: number;
}

/** One role of a gang: `count` identical members. */
export interface RoleSpec {
  name: string;
  count: number;
  /** An elastic role (DESIGN.md §13): the fewest members it runs with, below `count` (absent: count, not elastic). */
  minCount?: number;
  resources: MemberResources;
  /** What a real agent runs for each member: argv array, or a string run by `/bin/sh -c`. */
  command?: string[] | string;
  /** Extra environment variables for the member's command. */
  env?: Record<string, string>;
}

/** Where members go: `pack` (fewest hosts), `spread` (distinct hosts), `same-node` (one host). */
export type PlacementPolicy = 'pack' | 'spread' | 'same-node';

/** How a topology constraint binds: `required` (one domain or wait) or `preferred` (the fewest domains). */
export type TopologyMode = 'required' | 'preferred';

/** Placement beyond a node (contract v1.1): the gang within hosts that share the value of label `key`. */
export interface TopologySpec {
  key: string;
  mode: TopologyMode;
}

/** Placement options of a job. */
export interface PlacementSpec {
  policy: PlacementPolicy;
  /** Members per host under `pack` (the last host takes the remainder); absent: balanced plans. */
  ptile?: number;
  /** The GPUs a gang takes on one host lie within one NVLink domain. */
  gpuLocality: boolean;
  /** Topology domains (absent: none; a job without it fingerprints as before topology existed). */
  topology?: TopologySpec;
}

/** Who a job runs for; DRF shares and the unsatisfiable cache key use it. */
export interface Identity {
  user: string;
  queue: string;
  project: string;
}

/**
 * What a job asks of the cluster in one request (DESIGN.md §4): its roles, placement and select.
 * A job without alternatives is its own request; a job with alternatives has one per variant.
 */
export interface JobRequest {
  roles: RoleSpec[];
  placement: PlacementSpec;
  select: string;
}

/** The fields every JobSpec has, whether it gives one request or alternatives. */
interface JobSpecCommon {
  id: string;
  identity: Identity;
  priority: number;
  /** 0 (release members as they finish) or the gang size (kept warm until closed). */
  minInstances: number;
  /** Longest wait to be placed, from when the job last became pending; absent: no limit. */
  timeoutMs?: number;
  /** Hint for simulated agents: how long a member runs. */
  runtimeMs?: number;
  /** Longest the gang may run from its commit; the first session at or after that stops it. Absent: no limit. */
  runtimeLimitMs?: number;
  /** What a failing member does to its gang (DESIGN.md §15); absent: no restart (contract v1.2 logs), today's behaviour on older logs. */
  failurePolicy?: FailurePolicy;
}

/** What a member's exit with one of `onExitCodes` does to its gang. */
export interface FailureRule {
  onExitCodes: number[];
  action: 'restart' | 'fail' | 'ignore';
}

/** A job's failure policy (DESIGN.md §15), defaults filled in. */
export interface FailurePolicy {
  maxRestarts: number;
  backoffMs: number;
  rules: FailureRule[];
}

/** A JobSpec that gives its request at the top level (every job before contract v1.1's alternatives). */
export interface PlainJobSpec extends JobSpecCommon, JobRequest {
  alternatives?: undefined;
}

/**
 * A JobSpec with alternatives (DESIGN.md §13): 2 to 8 requests, tried in order, the first that
 * fits commits. It has no top-level roles, placement or select: read the request in force
 * (`activeRequest`) or every variant (`jobRequests`), never `spec.roles`.
 */
export interface AlternativesJobSpec extends JobSpecCommon {
  alternatives: JobRequest[];
  roles?: undefined;
  placement?: undefined;
  select?: undefined;
}

/**
 * A validated, normalised JobSpec (DESIGN.md §4): the `tasks`/`resources` shorthand is expanded
 * to one role named `task` (in each variant too), defaults are filled in, and `select` is the
 * source text ('' = all).
 */
export type JobSpec = PlainJobSpec | AlternativesJobSpec;

/** One GPU device of a node. */
export interface GpuDevice {
  id: number;
  memoryMb: number;
  model: string;
  nvlinkDomain: number;
}

/** What a node offers (DESIGN.md §4). `slots` absent means no slot limit. */
export interface NodeCapacity {
  cpu: number;
  memoryMb: number;
  slots?: number;
}

/** A port range, both ends included. */
export interface PortRange {
  from: number;
  to: number;
}

/** A validated NodeSpec: labels, capacity and GPU devices (sorted by id); `address` and `ports` only when given (contract v1.2). */
export interface NodeSpec {
  id: string;
  labels: Record<string, string | number>;
  capacity: NodeCapacity;
  gpus: GpuDevice[];
  /** Host name or IP the gang's other nodes reach this node at (absent: the node id is its host name). */
  address?: string;
  /** Ports lent to gangs for their rendezvous (absent: 29500..29999). */
  ports?: PortRange;
}

/** A field-level validation failure; `path` is dotted (`roles.1.count`, `minInstances`). */
export interface SpecIssue {
  path: string;
  message: string;
}

/**
 * A PolicySpec (DESIGN.md §11): the fields an operator sets; those it leaves out stay as they are.
 * The schema's output type: each field, its bounds and its description are declared there once.
 */
export type PolicySpec = z.output<typeof policySpecSchema>;

/**
 * The policy in force: the fields of contract v1.1's first defaults always set; the later ones
 * absent where never set (so a log whose policy never named them folds and hashes as before).
 */
export type Policy = Required<Pick<PolicySpec, 'reserveDepth' | 'assumedRuntimeMs'>> & PolicySpec;

/** An amount per resource a queue names (guarantee or max); a resource left out is not named. */
export interface QueueResources {
  cpu?: number;
  memoryMb?: number;
  gpus?: number;
}

/** A validated QueueSpec (DESIGN.md §12): a node of the queue tree. */
export interface QueueSpec {
  name: string;
  /** Absent: a root queue. */
  parent?: string;
  weight: number;
  guaranteed: QueueResources;
  max: QueueResources;
  preemption: { withinQueue: 'never' | 'lower-priority'; reclaim: boolean };
  defaultRuntimeLimitMs?: number;
  maxRuntimeLimitMs?: number;
}

/** The result of validating outside input: the normalised value, or the first issue found. */
export type Validated<T> = { ok: true; value: T } | { ok: false; error: SpecIssue };
