import { setTimeout as sleep } from 'node:timers/promises';
import { lastLogSequence, readLogEntries } from '@muster/bus';
import type { Bus } from '@muster/bus';
import type { SchedulerEvent } from '@muster/core';
import { StoryIndex } from './storyIndex.ts';
import type { FeedItem, StoryEvent, StoryIndexLimits } from './storyIndex.ts';

/** What a follower keeps in memory, and from how far back it reads. */
export interface LogFollowerOptions extends StoryIndexLimits {
  /** Index at most this many transactions back from the log's end at start (default 100,000). */
  windowTransactions?: number;
}

/** What a listener hears: every decision, and the sequence of every transaction read. */
export interface LogListener {
  decision(item: FeedItem): void;
  advanced(seq: number): void;
}

/**
 * Follows MUSTER_LOG (through libs/bus) from a bounded window before its end and keeps, per job,
 * the events about it (a job's story), and the latest decisions; tells listeners as it reads.
 * It indexes what the log says and folds nothing: the state comes from the replicas' API.
 */
export class LogFollower {
  private readonly index: StoryIndex;
  private readonly listeners = new Set<LogListener>();
  private readonly stop = new AbortController();
  private running: Promise<void> | null = null;
  private fromSeq = 1;
  private seq = 0;
  private readonly window: number;

  constructor(
    private readonly bus: Bus,
    opts: LogFollowerOptions = {},
  ) {
    this.window = opts.windowTransactions ?? 100_000;
    this.index = new StoryIndex(opts);
  }

  /** Starts following in the background (retrying while the log does not exist yet or NATS is away). */
  start(onError: (err: unknown) => void): void {
    this.running ??= this.follow(onError);
  }

  /** Stops following. */
  async close(): Promise<void> {
    this.stop.abort();
    await this.running;
  }

  /** The last log sequence read, and the first one indexed. */
  progress(): { seq: number; fromSeq: number } {
    return { seq: this.seq, fromSeq: this.fromSeq };
  }

  /** The latest decisions, oldest first. */
  decisions(): FeedItem[] {
    return this.index.decisions();
  }

  /** What the log says about a job since the window began, or null when it names no such job there. */
  story(jobId: string): { events: StoryEvent[]; dropped: number; fromSeq: number } | null {
    const story = this.index.story(jobId);
    return story === null ? null : { ...story, fromSeq: this.fromSeq };
  }

  /** Adds a listener; returns how to remove it. */
  listen(listener: LogListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private async follow(onError: (err: unknown) => void): Promise<void> {
    const signal = this.stop.signal;
    for (let attempt = 1; !signal.aborted; attempt++) {
      try {
        if (this.seq === 0) {
          const last = await lastLogSequence(this.bus);
          this.fromSeq = Math.max(1, last - this.window + 1);
        }
        for await (const entry of readLogEntries(this.bus, { fromSeq: Math.max(this.fromSeq, this.seq + 1), tail: true, signal })) {
          this.take(entry.seq, entry.tx.at, entry.tx.events);
          attempt = 1;
        }
      } catch (err) {
        if (signal.aborted) return;
        onError(err);
      }
      // the log does not exist until a scheduler has run, and NATS may be restarting
      await sleep(Math.min(2000, 200 * attempt), undefined, { signal }).catch(() => undefined);
    }
  }

  private take(seq: number, at: number, events: readonly SchedulerEvent[]): void {
    this.seq = seq;
    for (const item of this.index.add(seq, at, events)) for (const l of this.listeners) l.decision(item);
    for (const l of this.listeners) l.advanced(seq);
  }
}
