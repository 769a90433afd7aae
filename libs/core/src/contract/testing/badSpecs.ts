import { designAlternativesExample, designJobSpecExample, designNodeSpecExample } from './designExamples.ts';

/** Breaks (mutates or replaces) an example spec for a test case. */
export type Mutation = (spec: Record<string, unknown>) => unknown;

function role(i: number) {
  return (spec: Record<string, unknown>) => (spec.roles as Record<string, unknown>[])[i] as Record<string, unknown>;
}
function resources(i: number) {
  return (spec: Record<string, unknown>) => role(i)(spec).resources as Record<string, unknown>;
}
function placement(spec: Record<string, unknown>) {
  return spec.placement as Record<string, unknown>;
}
function identity(spec: Record<string, unknown>) {
  return spec.identity as Record<string, unknown>;
}

/** Each case: what to break in the DESIGN.md example, the path reported, and the message. */
export const BAD_JOB_SPECS: ReadonlyArray<[string, Mutation, string, string]> = [
  ['a number body', () => 5, '', 'job spec: must be an object (got 5)'],
  ['an array body', () => [], '', 'job spec: must be an object (got an array)'],
  ['a null body', () => null, '', 'job spec: must be an object (got null)'],
  ['no id', (s) => { delete s.id; }, 'id', 'id: is required'],
  ['an id with a space', (s) => { s.id = 'a b'; }, 'id', 'id: must be 1 to 128 characters from A-Z, a-z, 0-9, _ and - (and not __proto__)'],
  ['an id with a dot', (s) => { s.id = 'a.b'; }, 'id', 'id: must be 1 to 128 characters from A-Z, a-z, 0-9, _ and - (and not __proto__)'],
  ['an empty id', (s) => { s.id = ''; }, 'id', 'id: must be 1 to 128 characters from A-Z, a-z, 0-9, _ and - (and not __proto__)'],
  ['a 129-character id', (s) => { s.id = 'x'.repeat(129); }, 'id', 'id: must be 1 to 128 characters from A-Z, a-z, 0-9, _ and - (and not __proto__)'],
  ['the id __proto__', (s) => { s.id = '__proto__'; }, 'id', 'id: must be 1 to 128 characters from A-Z, a-z, 0-9, _ and - (and not __proto__)'],
  ['the user __proto__', (s) => { identity(s).user = '__proto__'; }, 'identity.user', 'identity.user: must not be __proto__'],
  ['a numeric id', (s) => { s.id = 7; }, 'id', 'id: must be a string (got 7)'],
  ['no identity', (s) => { delete s.identity; }, 'identity', 'identity: is required'],
  ['a string identity', (s) => { s.identity = 'alice'; }, 'identity', 'identity: must be an object (got "alice")'],
  ['no user', (s) => { delete identity(s).user; }, 'identity.user', 'identity.user: is required'],
  ['an empty user', (s) => { identity(s).user = ''; }, 'identity.user', 'identity.user: must not be empty'],
  ['a long queue', (s) => { identity(s).queue = 'q'.repeat(129); }, 'identity.queue', 'identity.queue: must be at most 128 characters long'],
  ['a numeric project', (s) => { identity(s).project = 5; }, 'identity.project', 'identity.project: must be a string (got 5)'],
  ['an unknown identity field', (s) => { identity(s).team = 'x'; }, 'identity.team', 'identity.team: unknown field'],
  ['a fractional priority', (s) => { s.priority = 1.5; }, 'priority', 'priority: must be an integer (got 1.5)'],
  ['a string priority', (s) => { s.priority = '1'; }, 'priority', 'priority: must be an integer (got "1")'],
  ['a huge priority', (s) => { s.priority = 2e6; }, 'priority', 'priority: must be at most 1000000'],
  ['a very negative priority', (s) => { s.priority = -2e6; }, 'priority', 'priority: must be at least -1000000'],
  ['empty roles', (s) => { s.roles = []; }, 'roles', 'roles: must not be empty'],
  ['roles as an object', (s) => { s.roles = {}; }, 'roles', 'roles: must be an array (got an object)'],
  ['a role of zero', (s) => { role(1)(s).count = 0; }, 'roles.1.count', 'roles.1.count: must be at least 1'],
  ['a role of 1e300', (s) => { role(1)(s).count = 1e300; }, 'roles.1.count', 'roles.1.count: must be at most 4096'],
  ['a fractional count', (s) => { role(0)(s).count = 1.5; }, 'roles.0.count', 'roles.0.count: must be an integer (got 1.5)'],
  ['no count', (s) => { delete role(0)(s).count; }, 'roles.0.count', 'roles.0.count: is required'],
  ['a role name with a dot', (s) => { role(0)(s).name = 'a.b'; }, 'roles.0.name', 'roles.0.name: must be 1 to 128 characters from A-Z, a-z, 0-9, _ and - (and not __proto__)'],
  ['a duplicate role name', (s) => { role(1)(s).name = 'world'; }, 'roles.1.name', "roles.1.name: duplicate role name 'world'"],
  ['no resources', (s) => { delete role(0)(s).resources; }, 'roles.0.resources', 'roles.0.resources: is required'],
  ['negative cpu', (s) => { resources(0)(s).cpu = -1; }, 'roles.0.resources.cpu', 'roles.0.resources.cpu: must be at least 0'],
  ['fractional cpu', (s) => { resources(0)(s).cpu = 0.5; }, 'roles.0.resources.cpu', 'roles.0.resources.cpu: must be an integer (got 0.5)'],
  ['no memoryMb', (s) => { delete resources(0)(s).memoryMb; }, 'roles.0.resources.memoryMb', 'roles.0.resources.memoryMb: is required'],
  ['fractional gpus', (s) => { resources(1)(s).gpus = 0.5; }, 'roles.1.resources.gpus', 'roles.1.resources.gpus: must be an integer (got 0.5)'],
  ['negative gpuMemoryMb', (s) => { resources(1)(s).gpuMemoryMb = -5; }, 'roles.1.resources.gpuMemoryMb', 'roles.1.resources.gpuMemoryMb: must be at least 0'],
  ['a misspelt resource', (s) => { resources(0)(s).gpu = 1; }, 'roles.0.resources.gpu', "roles.0.resources.gpu: unknown field (did you mean 'gpus'?)"],
  ['an unknown role field', (s) => { role(0)(s).replicas = 2; }, 'roles.0.replicas', 'roles.0.replicas: unknown field'],
  ['an empty command', (s) => { role(0)(s).command = ''; }, 'roles.0.command', 'roles.0.command: must not be empty'],
  ['an empty argv', (s) => { role(0)(s).command = []; }, 'roles.0.command', 'roles.0.command: must be a non-empty string or a non-empty array of strings'],
  ['a numeric argument', (s) => { role(0)(s).command = ['run', 2]; }, 'roles.0.command', 'roles.0.command: must be a non-empty string or a non-empty array of strings'],
  ['an empty program', (s) => { role(0)(s).command = ['', 'x']; }, 'roles.0.command.0', 'roles.0.command.0: must not be empty'],
  ['a numeric env value', (s) => { role(0)(s).env = { A: 1 }; }, 'roles.0.env.A', 'roles.0.env.A: must be a string (got 1)'],
  ['a bad env name', (s) => { role(0)(s).env = { '1A': 'x' }; }, 'roles.0.env.1A', 'roles.0.env.1A: environment variable name must match [A-Za-z_][A-Za-z0-9_]*'],
  ['a __proto__ env name', (s) => JSON.parse(JSON.stringify(s).replace('"roles":[{', '"roles":[{"env":{"__proto__":"x"},')), 'roles.0.env.__proto__', 'roles.0.env.__proto__: environment variable name must not be __proto__'],
  ['roles and tasks', (s) => { s.tasks = 3; }, 'tasks', 'tasks: give roles or the tasks/resources shorthand, not both'],
  ['roles and resources', (s) => { s.resources = { cpu: 1, memoryMb: 1 }; }, 'resources', 'resources: give roles or the tasks/resources shorthand, not both'],
  ['neither roles nor tasks', (s) => { delete s.roles; }, 'roles', 'roles: is required (or the tasks/resources shorthand, or alternatives)'],
  ['tasks without resources', (s) => { delete s.roles; s.tasks = 3; }, 'resources', 'resources: is required with tasks'],
  ['resources without tasks', (s) => { delete s.roles; s.resources = { cpu: 1, memoryMb: 1 }; }, 'tasks', 'tasks: is required with resources'],
  ['zero tasks', (s) => { delete s.roles; s.tasks = 0; s.resources = { cpu: 1, memoryMb: 1 }; }, 'tasks', 'tasks: must be at least 1'],
  ['too many tasks', (s) => { delete s.roles; s.tasks = 5000; s.resources = { cpu: 1, memoryMb: 1 }; }, 'tasks', 'tasks: must be at most 4096'],
  ['shorthand resources missing cpu', (s) => { delete s.roles; s.tasks = 2; s.resources = { memoryMb: 1 }; }, 'resources.cpu', 'resources.cpu: is required'],
  ['a gang over 4096', (s) => { role(0)(s).count = 3000; role(1)(s).count = 3000; }, 'roles', 'roles: the gang has 6000 members; at most 4096'],
  ['an unknown policy', (s) => { placement(s).policy = 'binpack'; }, 'placement.policy', 'placement.policy: must be one of "pack", "spread", "same-node"'],
  ['a zero ptile', (s) => { placement(s).ptile = 0; }, 'placement.ptile', 'placement.ptile: must be at least 1'],
  ['ptile with spread', (s) => { placement(s).policy = 'spread'; }, 'placement.ptile', "placement.ptile: applies only to policy 'pack' (policy is 'spread')"],
  ['a string gpuLocality', (s) => { placement(s).gpuLocality = 'yes'; }, 'placement.gpuLocality', 'placement.gpuLocality: must be true or false (got "yes")'],
  ['an unknown placement field', (s) => { placement(s).nvlink = true; }, 'placement.nvlink', 'placement.nvlink: unknown field'],
  ['a numeric select', (s) => { s.select = 5; }, 'select', 'select: must be a string (got 5)'],
  ['a null select', (s) => { s.select = null; }, 'select', 'select: must be a string (got null)'],
  ['an unfinished select', (s) => { s.select = 'zone == '; }, 'select', 'select: expected a value at position 8'],
  ['a select with a bare word', (s) => { s.select = 'zone == a'; }, 'select', "select: expected a value at position 8 (found 'a'): write text in quotes, as in 'a' (a label compares only with a value)"],
  ['a long select', (s) => { s.select = `zone == '${'a'.repeat(4090)}'`; }, 'select', 'select: must be at most 4096 characters long'],
  ['minInstances between 0 and the gang', (s) => { s.minInstances = 2; }, 'minInstances', 'minInstances: must be 0 or the gang size 3 (got 2)'],
  ['minInstances above the gang', (s) => { s.minInstances = 4; }, 'minInstances', 'minInstances: must be 0 or the gang size 3 (got 4)'],
  ['negative minInstances', (s) => { s.minInstances = -1; }, 'minInstances', 'minInstances: must be at least 0'],
  ['a zero timeout', (s) => { s.timeoutMs = 0; }, 'timeoutMs', 'timeoutMs: must be at least 1'],
  ['a fractional timeout', (s) => { s.timeoutMs = 1.5; }, 'timeoutMs', 'timeoutMs: must be an integer (got 1.5)'],
  ['a negative runtime', (s) => { s.runtimeMs = -1; }, 'runtimeMs', 'runtimeMs: must be at least 0'],
  ['a string runtime', (s) => { s.runtimeMs = '5s'; }, 'runtimeMs', 'runtimeMs: must be an integer (got "5s")'],
  ['a misspelt minInstances', (s) => { s.minInstance = 3; }, 'minInstance', "minInstance: unknown field (did you mean 'minInstances'?)"],
  ['a misspelt roles', (s) => { s.rolse = s.roles; delete s.roles; }, 'rolse', "rolse: unknown field (did you mean 'roles'?)"],
  ['a field in the wrong case', (s) => { s.Priority = 1; }, 'Priority', "Priority: unknown field (did you mean 'priority'?)"],
  ['an unrelated unknown field', (s) => { s.owner = 'x'; }, 'owner', 'owner: unknown field'],
  ['a __proto__ field', (s) => JSON.parse(JSON.stringify(s).replace('{', '{"__proto__":{"x":1},')), '__proto__', '__proto__: unknown field'],
  // alternatives (DESIGN.md §13): instead of the top-level request, 2 to 8 of them, each checked as one
  ['alternatives and top-level roles', (s) => { s.alternatives = alternatives(); }, 'roles', 'roles: give alternatives or a top-level roles, not both (each alternative has its own roles, placement and select)'],
  ['alternatives and a top-level select', (s) => { s.alternatives = alternatives(); delete s.roles; delete s.placement; }, 'select', 'select: give alternatives or a top-level select, not both (each alternative has its own roles, placement and select)'],
  ['one alternative', () => ({ ...designAlternativesExample(), alternatives: alternatives().slice(0, 1) }), 'alternatives', 'alternatives: must have at least 2 items'],
  ['nine alternatives', () => ({ ...designAlternativesExample(), alternatives: [...alternatives(), ...alternatives(), ...alternatives(), ...alternatives(), ...alternatives()].slice(0, 9) }), 'alternatives', 'alternatives: must have at most 8 items'],
  ['alternatives as an object', () => ({ ...designAlternativesExample(), alternatives: {} }), 'alternatives', 'alternatives: must be an array (got an object)'],
  ['an alternative with neither roles nor tasks', () => withAlternative(1, (v) => { delete v.tasks; delete v.resources; }), 'alternatives.1.roles', 'alternatives.1.roles: is required (or the tasks/resources shorthand)'],
  ['an alternative with roles and tasks', () => withAlternative(0, (v) => { v.tasks = 2; }), 'alternatives.0.tasks', 'alternatives.0.tasks: give roles or the tasks/resources shorthand, not both'],
  ['an unknown field in an alternative', () => withAlternative(1, (v) => { v.priority = 5; }), 'alternatives.1.priority', 'alternatives.1.priority: unknown field'],
  ['a zero count in an alternative', () => withAlternative(0, (v) => { ((v.roles as Record<string, unknown>[])[1]!).count = 0; }), 'alternatives.0.roles.1.count', 'alternatives.0.roles.1.count: must be at least 1'],
  ['a bad select in an alternative', () => withAlternative(1, (v) => { v.select = 'gpu_model == '; }), 'alternatives.1.select', 'alternatives.1.select: expected a value at position 13'],
  ['a duplicate role name in an alternative', () => withAlternative(0, (v) => { ((v.roles as Record<string, unknown>[])[1]!).name = 'world'; }), 'alternatives.0.roles.1.name', "alternatives.0.roles.1.name: duplicate role name 'world'"],
  ['ptile with spread in an alternative', () => withAlternative(0, (v) => { (v.placement as Record<string, unknown>).policy = 'spread'; }), 'alternatives.0.placement.ptile', "alternatives.0.placement.ptile: applies only to policy 'pack' (policy is 'spread')"],
  ['minInstances of no alternative', () => ({ ...designAlternativesExample(), minInstances: 5 }), 'minInstances', 'minInstances: must be 0 or the gang size of one alternative (3, 4) (got 5)'],
  // failurePolicy (contract v1.2, DESIGN.md §15)
  ['maxRestarts above 100', (s) => { s.failurePolicy = { maxRestarts: 101 }; }, 'failurePolicy.maxRestarts', 'failurePolicy.maxRestarts: must be at most 100'],
  ['a negative maxRestarts', (s) => { s.failurePolicy = { maxRestarts: -1 }; }, 'failurePolicy.maxRestarts', 'failurePolicy.maxRestarts: must be at least 0'],
  ['a fractional backoffMs', (s) => { s.failurePolicy = { backoffMs: 1.5 }; }, 'failurePolicy.backoffMs', 'failurePolicy.backoffMs: must be an integer (got 1.5)'],
  ['a backoffMs over a day', (s) => { s.failurePolicy = { backoffMs: 86_400_001 }; }, 'failurePolicy.backoffMs', 'failurePolicy.backoffMs: must be at most 86400000'],
  ['a rule without exit codes', (s) => { s.failurePolicy = { rules: [{ onExitCodes: [], action: 'fail' }] }; }, 'failurePolicy.rules.0.onExitCodes', 'failurePolicy.rules.0.onExitCodes: must not be empty'],
  ['a fractional exit code', (s) => { s.failurePolicy = { rules: [{ onExitCodes: [7.5], action: 'fail' }] }; }, 'failurePolicy.rules.0.onExitCodes.0', 'failurePolicy.rules.0.onExitCodes.0: must be an integer (got 7.5)'],
  ['an unknown rule action', (s) => { s.failurePolicy = { rules: [{ onExitCodes: [7], action: 'retry' }] }; }, 'failurePolicy.rules.0.action', 'failurePolicy.rules.0.action: must be one of "restart", "fail", "ignore"'],
  ['an unknown failurePolicy field', (s) => { s.failurePolicy = { retries: 3 }; }, 'failurePolicy.retries', 'failurePolicy.retries: unknown field'],
];

/** The alternatives of the §13 example (a fresh copy). */
function alternatives(): Record<string, unknown>[] {
  return designAlternativesExample().alternatives as Record<string, unknown>[];
}

/** The §13 example with alternative `i` changed. */
function withAlternative(i: number, change: (variant: Record<string, unknown>) => void): Record<string, unknown> {
  const spec = designAlternativesExample();
  change((spec.alternatives as Record<string, unknown>[])[i]!);
  return spec;
}

function capacity(spec: Record<string, unknown>) {
  return spec.capacity as Record<string, unknown>;
}
function labels(spec: Record<string, unknown>) {
  return spec.labels as Record<string, unknown>;
}
function gpu(i: number) {
  return (spec: Record<string, unknown>) => (spec.gpus as Record<string, unknown>[])[i] as Record<string, unknown>;
}
function twoGpus(spec: Record<string, unknown>): void {
  spec.gpus = [{ id: 0, memoryMb: 1, model: 'A100' }, { id: 1, memoryMb: 1, model: 'A100' }];
}

/** Each case: what to break in the DESIGN.md example, the path reported, and the message. */
export const BAD_NODE_SPECS: ReadonlyArray<[string, Mutation, string, string]> = [
  ['a string body', () => 'n1', '', 'node spec: must be an object (got "n1")'],
  ['no id', (s) => { delete s.id; }, 'id', 'id: is required'],
  ['an id with a slash', (s) => { s.id = 'n/1'; }, 'id', 'id: must be 1 to 128 characters from A-Z, a-z, 0-9, _ and - (and not __proto__)'],
  ['labels as an array', (s) => { s.labels = ['a']; }, 'labels', 'labels: must be an object (got an array)'],
  ['a label name starting with a digit', (s) => { labels(s)['1zone'] = 'a'; }, 'labels.1zone', 'labels.1zone: label name must match [A-Za-z_][A-Za-z0-9_.-]*'],
  ['a label name with a space', (s) => { labels(s)['my zone'] = 'a'; }, 'labels.my zone', 'labels.my zone: label name must match [A-Za-z_][A-Za-z0-9_.-]*'],
  ['a boolean label', (s) => { labels(s).zone = true; }, 'labels.zone', 'labels.zone: must be a string or a number'],
  ['a null label', (s) => { labels(s).zone = null; }, 'labels.zone', 'labels.zone: must be a string or a number'],
  ['a __proto__ label', (s) => JSON.parse(JSON.stringify(s).replace('"labels":{', '"labels":{"__proto__":"x",')), 'labels.__proto__', 'labels.__proto__: label name must not be __proto__'],
  ['no capacity', (s) => { delete s.capacity; }, 'capacity', 'capacity: is required'],
  ['negative cpu', (s) => { capacity(s).cpu = -1; }, 'capacity.cpu', 'capacity.cpu: must be at least 0'],
  ['no memoryMb', (s) => { delete capacity(s).memoryMb; }, 'capacity.memoryMb', 'capacity.memoryMb: is required'],
  ['fractional slots', (s) => { capacity(s).slots = 1.5; }, 'capacity.slots', 'capacity.slots: must be an integer (got 1.5)'],
  ['gpus inside capacity', (s) => { capacity(s).gpus = 2; }, 'capacity.gpus', 'capacity.gpus: unknown field'],
  ['a misspelt capacity field', (s) => { capacity(s).memoryMB = 2; }, 'capacity.memoryMB', "capacity.memoryMB: unknown field (did you mean 'memoryMb'?)"],
  ['gpus as a count', (s) => { s.gpus = 2; }, 'gpus', 'gpus: must be an array (got 2)'],
  ['a negative gpu id', (s) => { gpu(0)(s).id = -1; }, 'gpus.0.id', 'gpus.0.id: must be at least 0'],
  ['a duplicate gpu id', (s) => { twoGpus(s); gpu(1)(s).id = 0; }, 'gpus.1.id', 'gpus.1.id: duplicate GPU id 0'],
  ['a gpu without model', (s) => { delete gpu(0)(s).model; }, 'gpus.0.model', 'gpus.0.model: is required'],
  ['a negative nvlinkDomain', (s) => { gpu(0)(s).nvlinkDomain = -1; }, 'gpus.0.nvlinkDomain', 'gpus.0.nvlinkDomain: must be at least 0'],
  ['an unknown gpu field', (s) => { gpu(0)(s).uuid = 'GPU-1'; }, 'gpus.0.uuid', 'gpus.0.uuid: unknown field'],
  ['an unknown top-level field', (s) => { s.label = {}; }, 'label', "label: unknown field (did you mean 'labels'?)"],
  ['an address with a space', (s) => { s.address = 'node 1'; }, 'address', 'address: must be a host name or an IP address'],
  ['an address with an empty label', (s) => { s.address = 'a..b'; }, 'address', 'address: must be a host name or an IP address'],
  ['a numeric address', (s) => { s.address = 10; }, 'address', 'address: must be a string (got 10)'],
  ['a port range from 0', (s) => { s.ports = { from: 0, to: 10 }; }, 'ports.from', 'ports.from: must be at least 1'],
  ['a port range to 65536', (s) => { s.ports = { from: 1, to: 65536 }; }, 'ports.to', 'ports.to: must be at most 65535'],
  ['a port range without its end', (s) => { s.ports = { from: 30000 }; }, 'ports.to', 'ports.to: is required'],
  ['a port range backwards', (s) => { s.ports = { from: 30001, to: 30000 }; }, 'ports.from', 'ports.from: 30001 is above ports.to 30000'],
];

/** Cases that only the validator catches: rules across fields, which JSON Schema cannot state. */
export const VALIDATOR_ONLY: ReadonlySet<string> = new Set([
  'a duplicate role name', 'a gang over 4096', 'ptile with spread',
  'an unfinished select', 'a select with a bare word', 'minInstances between 0 and the gang',
  'minInstances above the gang', 'a duplicate gpu id', 'a bad select in an alternative', 'a duplicate role name in an alternative',
  'ptile with spread in an alternative', 'minInstances of no alternative', 'a port range backwards',
]);

/** The DESIGN.md JobSpec example with one thing broken. */
export function brokenJobSpec(mutate: Mutation): unknown {
  const spec = designJobSpecExample();
  const replaced = mutate(spec);
  return replaced === undefined ? spec : replaced;
}

/** The DESIGN.md NodeSpec example with one thing broken. */
export function brokenNodeSpec(mutate: Mutation): unknown {
  const spec = designNodeSpecExample();
  const replaced = mutate(spec);
  return replaced === undefined ? spec : replaced;
}
