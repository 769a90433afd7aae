import { canonicalJson } from '../canonical.ts';
import type { JobRequest, JobSpec, NodeSpec } from '../contract/types.ts';
import { jobRequests, requestSelectAst } from '../jobRequests.ts';
import type { SelectAst } from '../select/index.ts';
import { selectLabels } from '../select/selectLabels.ts';
import type { JobState } from '../state.ts';
import { gangShape } from './gangShape.ts';
import type { GangShape } from './gangShape.ts';

/**
 * What placement derives from the state's specs (node specs, job specs and their requests), made
 * once per spec: specs are immutable and shared by every later state, so a memo keyed by them
 * serves every session of one driver. Owned by the `HostIndexCache` of a turn context (and handed
 * to each host index made for it), never by a module: a core that kept it in module state would
 * carry one driver's objects into another's turns.
 */
export class SpecMemo {
  private readonly classKeys = new WeakMap<NodeSpec, string>();
  private readonly readKeys = new WeakMap<NodeSpec, { labels: ReadonlySet<string>; key: string }>();
  private readonly stripped = new WeakMap<NodeSpec, NodeSpec>();
  private readonly shapes = new WeakMap<JobRequest, GangShape>();
  private readonly plainShapes = new WeakMap<GangShape, GangShape>();
  private readonly asts = new WeakMap<JobRequest, SelectAst | null>();
  private readonly jobLabels = new WeakMap<JobSpec, readonly string[]>();
  private readonly oneRequest = new WeakMap<JobSpec, readonly JobRequest[]>();

  /**
   * The class key of a node spec (labels, capacity and GPU layout); with `labels`, only those
   * labels count (hosts that differ in labels nothing reads share a class).
   */
  hostClassKey(spec: NodeSpec, labels: ReadonlySet<string> | null = null): string {
    if (labels !== null) {
      const memo = this.readKeys.get(spec);
      if (memo !== undefined && memo.labels === labels) return memo.key;
      const kept: Record<string, unknown> = {};
      for (const name of Object.keys(spec.labels)) if (labels.has(name)) kept[name] = spec.labels[name];
      const key = canonicalJson({ labels: kept, capacity: spec.capacity, gpus: spec.gpus });
      this.readKeys.set(spec, { labels, key });
      return key;
    }
    let key = this.classKeys.get(spec);
    if (key === undefined) {
      key = canonicalJson({ labels: spec.labels, capacity: spec.capacity, gpus: spec.gpus });
      this.classKeys.set(spec, key);
    }
    return key;
  }

  /** A node spec's copy without labels (made once per spec, so its class key is computed once too). */
  strippedSpec(spec: NodeSpec): NodeSpec {
    let copy = this.stripped.get(spec);
    if (copy === undefined) {
      copy = { ...spec, labels: {} };
      this.stripped.set(spec, copy);
    }
    return copy;
  }

  /** The placement shape of one request (`gangShape`). */
  gangShape(request: JobRequest): GangShape {
    let shape = this.shapes.get(request);
    if (shape === undefined) {
      shape = gangShape(request);
      this.shapes.set(request, shape);
    }
    return shape;
  }

  /** The same gang without its topology. */
  withoutTopology(shape: GangShape): GangShape {
    if (shape.placement.topology === undefined) return shape;
    let plain = this.plainShapes.get(shape);
    if (plain === undefined) {
      const { topology: _topology, ...placement } = shape.placement;
      plain = { ...shape, placement };
      this.plainShapes.set(shape, plain);
    }
    return plain;
  }

  /** Every request a job may be placed with (`jobRequests`). */
  requests(spec: JobSpec): readonly JobRequest[] {
    return jobRequests(spec, this.oneRequest);
  }

  /** The compiled select of variant `i` of a job (`requestSelectAst`). */
  selectAst(job: Pick<JobState, 'spec' | 'selectAst'>, i: number): SelectAst | null {
    return requestSelectAst(job, i, this.asts);
  }

  /** The labels a job's requests read: every variant's select names and topology key (also for a running gang). */
  labelsRead(job: JobState): readonly string[] {
    let labels = this.jobLabels.get(job.spec);
    if (labels === undefined) {
      const found = new Set<string>();
      this.requests(job.spec).forEach((request, i) => {
        const ast = this.selectAst(job, i);
        if (ast !== null) for (const name of selectLabels(ast)) found.add(name);
        if (request.placement.topology !== undefined) found.add(request.placement.topology.key);
      });
      labels = [...found];
      this.jobLabels.set(job.spec, labels);
    }
    return labels;
  }
}
