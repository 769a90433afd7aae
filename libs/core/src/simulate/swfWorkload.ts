import type { WorkloadEntry, WorkloadScenario } from './workloadScenario.ts';

/** How a Standard Workload Format trace becomes a workload (`muster simulate --swf`). */
export interface SwfOptions {
  /** Hosts of the simulated cluster (absent: the header's MaxProcs, or MaxNodes, over `slotsPerHost`). */
  hosts?: number;
  /** Slots of each host, one a processor (default 1). */
  slotsPerHost?: number;
  /** Which time bounds a job's run: its actual run time (default) or the time it requested; plus 1 s. */
  estimate?: 'actual' | 'requested';
  /** Only the first N jobs of the trace that can run (absent: all). */
  limit?: number;
}

/** A trace turned into a workload, with what was left out or changed, for the operator to read. */
export type SwfRun = { ok: true; scenario: WorkloadScenario; notes: string[] } | { ok: false; error: string };

/** The SWF fields read, by 1-based number, with their names for error messages. */
const FIELD = { job: 1, submit: 2, run: 4, allocated: 5, requestedProcs: 8, requestedTime: 9 } as const;
const NAMES: Record<number, string> = { 1: 'job number', 2: 'submit time', 4: 'run time', 5: 'allocated processors', 8: 'requested processors', 9: 'requested time' };
const SWF_FIELDS = 18;
const NUMBER = /^-?\d+(\.\d+)?$/;

/** A member's resources on a simulated host: one slot, and the CPU and memory that go with it. */
const MEMBER = { cpu: 1000, memoryMb: 1024 };

/**
 * Turns the text of a Standard Workload Format trace (the Parallel Workloads Archive's: 18
 * whitespace-separated numbers a job, `;` comments) into a workload scenario (DESIGN.md §11): hosts
 * of `slotsPerHost` one-processor slots; a job of P processors (requested, else allocated) a gang of
 * P one-slot members submitted at its submit time, whose members run its run time, under a runtime
 * limit of its run time (or requested time) plus 1 s. Jobs with no run time or no processors are
 * left out, and said so in a note; a line that is not SWF is an error naming the line and field.
 */
export function swfWorkload(text: string, options: SwfOptions = {}): SwfRun {
  const slots = options.slotsPerHost ?? 1;
  if (!Number.isSafeInteger(slots) || slots < 1) return { ok: false, error: `slots per host: must be an integer ≥ 1, got ${slots}` };
  if (options.limit !== undefined && (!Number.isSafeInteger(options.limit) || options.limit < 1)) return { ok: false, error: `limit: must be an integer ≥ 1, got ${options.limit}` };
  const estimate = options.estimate ?? 'actual';
  const workload: WorkloadEntry[] = [];
  const header: Record<string, string> = {};
  const seen = new Set<number>();
  let noRun = 0;
  let noProcs = 0;
  let noRequest = 0;
  let previous = 0;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length && (options.limit === undefined || workload.length < options.limit); i++) {
    const line = lines[i]!.trim();
    const where = `line ${i + 1}`;
    if (line === '') continue;
    if (line.startsWith(';')) {
      const m = /^;\s*(\w+):\s*(.*)$/.exec(line);
      if (m !== null) header[m[1]!] = m[2]!.trim();
      continue;
    }
    const fields = line.split(/\s+/);
    if (fields.length !== SWF_FIELDS) return { ok: false, error: `${where}: a job has ${SWF_FIELDS} fields, this line has ${fields.length}` };
    const bad = fields.findIndex((f) => !NUMBER.test(f));
    if (bad >= 0) return { ok: false, error: `${where}, field ${bad + 1}${NAMES[bad + 1] === undefined ? '' : ` (${NAMES[bad + 1]})`}: not a number: ${JSON.stringify(fields[bad])}` };
    const read = (n: number): number | string => {
      const v = Number(fields[n - 1]);
      return Number.isSafeInteger(v) && v >= -1 ? v : `${where}, field ${n} (${NAMES[n]}): must be an integer ≥ -1 (-1: unknown), got ${fields[n - 1]}`;
    };
    const values: Record<keyof typeof FIELD, number> = { job: 0, submit: 0, run: 0, allocated: 0, requestedProcs: 0, requestedTime: 0 };
    for (const key of Object.keys(FIELD) as (keyof typeof FIELD)[]) {
      const v = read(FIELD[key]);
      if (typeof v === 'string') return { ok: false, error: v };
      values[key] = v;
    }
    const { job, submit, run } = values;
    if (job < 1) return { ok: false, error: `${where}, field 1 (job number): must be ≥ 1, got ${job}` };
    if (seen.has(job)) return { ok: false, error: `${where}, field 1 (job number): job ${job} is listed twice` };
    seen.add(job);
    if (submit < 0) return { ok: false, error: `${where}, field 2 (submit time): must be ≥ 0 (seconds from the trace's start), got ${submit}` };
    if (submit < previous) return { ok: false, error: `${where}, field 2 (submit time): ${submit} is before the job above it (${previous}); SWF lists jobs by submit time` };
    previous = submit;
    const procs = values.requestedProcs > 0 ? values.requestedProcs : values.allocated;
    if (run < 0) {
      noRun++;
      continue;
    }
    if (procs < 1) {
      noProcs++;
      continue;
    }
    let bound = run;
    if (estimate === 'requested') {
      if (values.requestedTime > 0) bound = values.requestedTime;
      else noRequest++;
    }
    workload.push({
      at: submit * 1000,
      runMs: run * 1000,
      submit: { id: `j${job}`, identity: { user: 'swf' }, tasks: procs, resources: MEMBER, runtimeLimitMs: bound * 1000 + 1000 },
    });
  }
  const fromHeader = Number(header.MaxProcs ?? header.MaxNodes);
  const hosts = options.hosts ?? (Number.isSafeInteger(fromHeader) && fromHeader > 0 ? Math.ceil(fromHeader / slots) : undefined);
  if (hosts === undefined) return { ok: false, error: 'the trace names no MaxProcs or MaxNodes in its header: give --hosts' };
  if (!Number.isSafeInteger(hosts) || hosts < 1) return { ok: false, error: `hosts: must be an integer ≥ 1, got ${hosts}` };
  const width = String(hosts).length;
  const nodes = Array.from({ length: hosts }, (_, h) => ({
    id: `h${String(h + 1).padStart(width, '0')}`,
    capacity: { cpu: MEMBER.cpu * slots, memoryMb: MEMBER.memoryMb * slots, slots },
    gpus: [],
  }));
  const notes: string[] = [];
  if (noRun > 0) notes.push(`${noRun} job(s) with no run time (field 4 is -1) left out`);
  if (noProcs > 0) notes.push(`${noProcs} job(s) with no processors (fields 8 and 5 are -1 or 0) left out`);
  if (noRequest > 0) notes.push(`${noRequest} job(s) with no requested time (field 9) bounded by their run time instead`);
  const wide = workload.filter((e) => (e.submit as { tasks: number }).tasks > hosts * slots).length;
  if (wide > 0) notes.push(`${wide} job(s) ask for more than the ${hosts * slots} slots of ${hosts} host(s): they cannot run`);
  return { ok: true, scenario: { nodes, workload }, notes };
}
