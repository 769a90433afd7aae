import { lastLogSequence, readLogEntries } from '@muster/bus';
import type { Bus } from '@muster/bus';
import type { SchedulerEvent } from '@muster/core';

/** One event of a job's story, where the log holds it. */
export interface StoryEvent {
  seq: number;
  index: number;
  /** The transaction's stamped time. */
  at: number;
  event: SchedulerEvent;
}

/** A decision as the live feed shows it: the event, its place in the log and its stamped time. */
export interface FeedItem {
  seq: number;
  at: number;
  event: SchedulerEvent;
}

/** Limits of what a follower keeps in memory. */
export interface LogFollowerOptions {
  /** Index at most this many transactions back from the log's end at start (default 100,000). */
  windowTransactions?: number;
  /** Keep the stories of at most this many jobs, the most recently heard of (default 20,000). */
  maxJobs?: number;
  /** Keep at most this many events per job, the first ones and the latest ones (default 200). */
  maxEventsPerJob?: number;
  /** Decisions the feed remembers for a page that connects later (default 200). */
  recentDecisions?: number;
}

/** What a listener hears: every decision, and the sequence of every transaction read. */
export interface LogListener {
  decision(item: FeedItem): void;
  advanced(seq: number): void;
}

/** The events the feed calls decisions (DESIGN.md §4, §11): what the scheduler decided about a job. */
const FEED_TYPES = new Set<SchedulerEvent['type']>(['GangCommitted', 'GangAborted', 'GangReserved', 'ReservationCleared', 'JobRejected', 'JobFinished']);

/**
 * Follows MUSTER_LOG (through libs/bus) from a bounded window before its end and keeps, per job,
 * the events about it (a job's story), and the latest decisions; tells listeners as it reads.
 * It indexes what the log says and folds nothing: the state comes from the replicas' API.
 */
export class LogFollower {
  private readonly stories = new Map<string, { events: StoryEvent[]; dropped: number }>();
  private readonly recent: FeedItem[] = [];
  private readonly listeners = new Set<LogListener>();
  private readonly stop = new AbortController();
  private running: Promise<void> | null = null;
  private fromSeq = 1;
  private seq = 0;
  private readonly window: number;
  private readonly maxJobs: number;
  private readonly maxEvents: number;
  private readonly maxRecent: number;

  constructor(
    private readonly bus: Bus,
    opts: LogFollowerOptions = {},
  ) {
    this.window = opts.windowTransactions ?? 100_000;
    this.maxJobs = opts.maxJobs ?? 20_000;
    this.maxEvents = opts.maxEventsPerJob ?? 200;
    this.maxRecent = opts.recentDecisions ?? 200;
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
    return [...this.recent];
  }

  /** What the log says about a job since the window began, or null when it names no such job there. */
  story(jobId: string): { events: StoryEvent[]; dropped: number; fromSeq: number } | null {
    const story = this.stories.get(jobId);
    return story === undefined ? null : { events: [...story.events], dropped: story.dropped, fromSeq: this.fromSeq };
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
      await sleep(Math.min(2000, 200 * attempt), signal);
    }
  }

  private take(seq: number, at: number, events: readonly SchedulerEvent[]): void {
    this.seq = seq;
    events.forEach((event, index) => {
      const jobId = jobOf(event);
      if (jobId !== null) this.remember(jobId, { seq, index, at, event });
      if (FEED_TYPES.has(event.type)) {
        const item: FeedItem = { seq, at: 'at' in event && typeof event.at === 'number' ? event.at : at, event };
        this.recent.push(item);
        if (this.recent.length > this.maxRecent) this.recent.shift();
        for (const l of this.listeners) l.decision(item);
      }
    });
    for (const l of this.listeners) l.advanced(seq);
  }

  private remember(jobId: string, e: StoryEvent): void {
    let story = this.stories.get(jobId);
    if (story === undefined) {
      story = { events: [], dropped: 0 };
      if (this.stories.size >= this.maxJobs) {
        // a Map iterates in insertion order: the first key is the job heard of least recently
        const oldest = this.stories.keys().next().value;
        if (oldest !== undefined) this.stories.delete(oldest);
      }
    } else {
      // heard of again: now the most recent
      this.stories.delete(jobId);
    }
    this.stories.set(jobId, story);
    story.events.push(e);
    // keep how the story began (submission, first decisions) and how it goes now
    if (story.events.length > this.maxEvents) {
      story.events.splice(Math.floor(this.maxEvents / 4), 1);
      story.dropped += 1;
    }
  }
}

/** The job an event is about (it names it, or submits it), or null. */
function jobOf(event: SchedulerEvent): string | null {
  if (event.type === 'JobSubmitted') return event.job.id;
  if ('jobId' in event && typeof event.jobId === 'string') return event.jobId;
  return null;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
