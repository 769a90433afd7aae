import type { Logger } from 'pino';
import { ensureStreams, streamDefinitions } from '@muster/bus';
import type { Bus, StreamDefinition } from '@muster/bus';

// the longest a look waits for one stream the cluster cannot place yet (as ensureStreams at start)
const PLACEMENT_WAIT_MS = 20_000;

/**
 * Keeps muster's streams and buckets in place while a replica runs: every `everyMs` it applies
 * their definitions again (`ensureStreams`: idempotent, never deletes or purges), so a lease bucket
 * or a stream deleted under a running cluster, or lost with a NATS node's store, is created again
 * by the running replicas, not only when one starts. A stream created again is said at error: what
 * it held is gone (a new MUSTER_LOG is a log that lost every write, which the replicas refuse).
 * Each stream is looked at on its own: one the cluster cannot place or that does not answer is
 * tried again for at most `everyMs` (the next look tries again), and one that fails does not stop
 * the others.
 */
export class StreamWatch {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private checking: Promise<void> = Promise.resolve();
  private stopped = false;
  // ends a look's wait for a stream the cluster cannot place yet, so that stopping is not held up
  private readonly stopping = new AbortController();

  constructor(
    private readonly bus: Bus,
    private readonly replicas: number,
    private readonly everyMs: number,
    private readonly log: Logger,
    private readonly definitions: readonly StreamDefinition[] = streamDefinitions,
  ) {}

  /** Looks every `everyMs` until stopped (0: never). */
  start(): void {
    if (this.everyMs <= 0 || this.stopped) return;
    this.timer = setTimeout(() => {
      this.checking = this.check().finally(() => this.start());
    }, this.everyMs);
  }

  /** Applies the definitions once, each on its own, saying what was missing or changed. */
  async check(): Promise<void> {
    for (const def of this.definitions) {
      if (this.stopped) return;
      try {
        await ensureStreams(this.bus, {
          replicas: this.replicas,
          definitions: [def],
          placementWaitMs: Math.min(this.everyMs, PLACEMENT_WAIT_MS),
          signal: this.stopping.signal,
          onEnsured: (r) => {
            if (r.action === 'created') this.log.error({ stream: r.name, kind: r.kind }, `ALARM: ${r.kind} ${r.name} was missing: created it again (what it held is gone)`);
            else if (r.action === 'updated') this.log.warn({ stream: r.name, kind: r.kind }, `${r.kind} ${r.name} had other settings: applied its definition again`);
          },
        });
      } catch (err) {
        // NATS away, a stream without quorum or still not placed: the next look tries again
        this.log.debug({ err, stream: def.config.name }, 'a stream could not be checked');
      }
    }
  }

  /** Stops looking, after a look in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    if (this.timer !== null) clearTimeout(this.timer);
    await this.checking;
  }
}
