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

/** How much a story index keeps. */
export interface StoryIndexLimits {
  /** Keep the stories of at most this many jobs, the most recently heard of (default 20,000). */
  maxJobs?: number;
  /** Keep at most this many events per job: the first quarter and the latest ones (default 200). */
  maxEventsPerJob?: number;
  /** Decisions remembered for a page that connects later (default 200). */
  recentDecisions?: number;
}

/** The events the feed calls decisions (DESIGN.md §4, §11, §13): what the scheduler decided about a job, an elastic gang's resizes too. */
const FEED_TYPES = new Set<SchedulerEvent['type']>(['GangCommitted', 'GangAborted', 'GangReserved', 'ReservationCleared', 'GangResized', 'JobRejected', 'JobFinished']);

/**
 * Log transactions indexed by job, in bounded memory: each job's events (its story) and the latest
 * decisions. It indexes what the log says and folds nothing.
 */
export class StoryIndex {
  private readonly stories = new Map<string, { events: StoryEvent[]; dropped: number }>();
  private readonly recent: FeedItem[] = [];
  private readonly maxJobs: number;
  private readonly maxEvents: number;
  private readonly maxRecent: number;

  constructor(limits: StoryIndexLimits = {}) {
    this.maxJobs = limits.maxJobs ?? 20_000;
    this.maxEvents = Math.max(4, limits.maxEventsPerJob ?? 200);
    this.maxRecent = limits.recentDecisions ?? 200;
  }

  /** Indexes one transaction's events; returns the decisions among them, for a live feed. */
  add(seq: number, at: number, events: readonly SchedulerEvent[]): FeedItem[] {
    const decisions: FeedItem[] = [];
    events.forEach((event, index) => {
      const jobId = jobOf(event);
      if (jobId !== null) this.remember(jobId, { seq, index, at, event });
      if (FEED_TYPES.has(event.type)) {
        const item: FeedItem = { seq, at: 'at' in event && typeof event.at === 'number' ? event.at : at, event };
        this.recent.push(item);
        if (this.recent.length > this.maxRecent) this.recent.shift();
        decisions.push(item);
      }
    });
    return decisions;
  }

  /** The latest decisions, oldest first. */
  decisions(): FeedItem[] {
    return [...this.recent];
  }

  /** A job's events (and how many from its middle were left out), or null when none is indexed. */
  story(jobId: string): { events: StoryEvent[]; dropped: number } | null {
    const story = this.stories.get(jobId);
    return story === undefined ? null : { events: [...story.events], dropped: story.dropped };
  }

  /** How many jobs have a story here. */
  get size(): number {
    return this.stories.size;
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
