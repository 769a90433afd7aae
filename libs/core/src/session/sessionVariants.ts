import type { JobRequest } from '../contract/types.ts';
import type { AllocationResources } from '../events.ts';
import { isElastic, requestFingerprint } from '../jobRequests.ts';
import type { GangShape } from '../placement/gangShape.ts';
import type { HostClass } from '../placement/hostClass.ts';
import type { Statement } from '../placement/statement.ts';
import { evalSelect } from '../select/index.ts';
import type { SelectAst } from '../select/index.ts';
import type { JobState } from '../state.ts';
import { countsDemand, minCounts, partShape } from './elasticGangs.ts';
import { gangRequest } from './queueLedger.ts';
import type { AttemptScope } from './sessionScope.ts';

/** One request of a job as an attempt tries it: the job's own, or one of its alternatives. */
export interface Variant {
  /** Its index among the job's alternatives (undefined: a job without alternatives). */
  alternative: number | undefined;
  request: JobRequest;
  shape: GangShape;
  /** What it asks of its queues (with queues defined; null otherwise). */
  demand: AllocationResources | null;
  /** Its unsatisfiable-cache fingerprint. */
  fingerprint: string;
  ast: SelectAst | null;
}

/** A gang as it is placed: its statement, its shape and what it asks of its queues (an elastic gang's at the size placed). */
export interface Placed {
  stmt: Statement;
  shape: GangShape;
  demand: AllocationResources | null;
}

/** The requests an attempt tries, in order: the job's own, or each of its alternatives. */
export function variantsOf(scope: AttemptScope, job: JobState): Variant[] {
  const requests = scope.index.memo.requests(job.spec);
  const alternatives = job.spec.alternatives !== undefined;
  return requests.map((request, i) => {
    // an elastic request must fit at its minimum (DESIGN.md §13): that is what an attempt tries first
    const elastic = isElastic(request);
    return {
      alternative: alternatives ? i : undefined,
      request,
      shape: elastic ? partShape(request, minCounts(request)) : scope.index.memo.gangShape(request),
      demand: scope.ledger === null ? null : elastic ? countsDemand(request, minCounts(request)) : gangRequest(request),
      fingerprint: requestFingerprint(job, i),
      ast: scope.index.memo.selectAst(job, i),
    };
  });
}

/** The host classes a variant's select matches (read once per select in a session). */
export function classesFor(scope: AttemptScope, variant: Variant): HostClass[] {
  const key = variant.request.select;
  let classes = scope.selectClasses.get(key);
  if (classes === undefined) {
    const ast = variant.ast;
    classes = scope.index.classes.filter((c) => ast === null || evalSelect(ast, { labels: c.spec.labels, capacity: c.spec.capacity, gpus: c.spec.gpus.length }));
    scope.selectClasses.set(key, classes);
  }
  return classes;
}
