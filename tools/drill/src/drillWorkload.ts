import { isMusterError } from '@muster/client';
import type { MusterClient } from '@muster/client';
import { within } from '@muster/stack';
import { drillJob } from './drillJobs.ts';
import type { DrillRandom } from './drillRandom.ts';
import { sleep, sleepUntil } from './drillSleep.ts';

/** A submission the scheduler acknowledged: from then on it must reach a decision. */
export interface AcceptedJob {
  id: string;
  /** When the acknowledgement came (ms since the epoch). */
  ackedAt: number;
  attempts: number;
  /** The MUSTER_IN sequence its submission was acknowledged at; absent when only a retry's `duplicate` answer said an earlier attempt landed. */
  inputSeq?: number;
}

/** The drill's stream of gang submissions and its own accounting of them. */
export interface DrillWorkload {
  /** Acknowledged submissions by job id. */
  readonly accepted: ReadonlyMap<string, AcceptedJob>;
  /** Jobs whose submission was never acknowledged (given up after every retry). */
  readonly unacknowledged: readonly string[];
  /** Submissions started. */
  attempted(): number;
  /** Stops submitting and waits (at most `waitMs`) for the submissions in flight. */
  stop(waitMs?: number): Promise<void>;
}

const MAX_ATTEMPTS = 12;
// about a second of submissions in flight: at 200 a second and ~100 ms a reply, 16 would cap the offered rate at ~160
const inFlightFor = (rate: number): number => Math.max(16, Math.ceil(rate));

/**
 * Submits `rate` gangs a second through the SDK (any replica's API, which forwards into MUSTER_IN)
 * until stopped; a submission that times out is retried with the same spec, hence the same msg id,
 * so a retry can never make a second job. A `duplicate` answer to a retry means an earlier
 * attempt landed: the job is accepted.
 */
export function startDrillWorkload(deps: { client: MusterClient; random: DrillRandom; rate: number; prefix: string }): DrillWorkload {
  const accepted = new Map<string, AcceptedJob>();
  const unacknowledged: string[] = [];
  const inFlight = new Set<Promise<void>>();
  const stopController = new AbortController();
  let n = 0;

  const submit = async (spec: Record<string, unknown>): Promise<void> => {
    const id = String(spec['id']);
    let wait = 250;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      try {
        const { inputSeq } = await deps.client.submit(spec);
        accepted.set(id, { id, ackedAt: Date.now(), attempts: attempt, inputSeq });
        return;
      } catch (err) {
        if (attempt > 1 && isMusterError(err, 'duplicate')) {
          accepted.set(id, { id, ackedAt: Date.now(), attempts: attempt });
          return;
        }
        // invalid is the drill's own bug: retrying cannot help
        if (isMusterError(err, 'invalid')) break;
      }
      await sleep(wait);
      wait = Math.min(wait * 2, 2_000);
    }
    unacknowledged.push(id);
  };

  const maxInFlight = inFlightFor(deps.rate);
  const loop = (async () => {
    const interval = 1000 / deps.rate;
    let next = Date.now();
    while (!stopController.signal.aborted) {
      if (inFlight.size < maxInFlight) {
        const p = submit(drillJob(deps.prefix, ++n, deps.random));
        inFlight.add(p);
        void p.finally(() => inFlight.delete(p));
      }
      // a fixed schedule, so a slow submission does not slow the ones after it
      next += interval;
      await sleepUntil(next, stopController.signal);
    }
  })();

  return {
    accepted,
    unacknowledged,
    attempted: () => n,
    async stop(waitMs = 30_000) {
      stopController.abort();
      await loop;
      await within(Promise.all([...inFlight]), waitMs);
    },
  };
}
