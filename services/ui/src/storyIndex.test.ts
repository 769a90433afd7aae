// The story index keeps bounded memory: the most recently heard of jobs, the first quarter and the
// latest events of a long story, the latest decisions; and it finds a job's every event.
import { describe, expect, it } from 'vitest';
import type { SchedulerEvent } from '@muster/core';
import { StoryIndex } from './storyIndex.ts';

const pended = (jobId: string, at: number): SchedulerEvent => ({ type: 'JobPended', jobId, at });
const committed = (jobId: string, at: number): SchedulerEvent => ({ type: 'GangCommitted', jobId, session: 1, at, allocations: [] });

describe('StoryIndex', () => {
  it("keeps a job's events in log order and reports its decisions for the feed", () => {
    const index = new StoryIndex();
    expect(index.add(1, 10, [pended('a', 10), { type: 'SessionStarted', session: 1 } as SchedulerEvent])).toEqual([]);
    const feed = index.add(2, 20, [committed('a', 20), committed('b', 21)]);
    expect(feed.map((f) => [f.seq, f.at, f.event.type])).toEqual([[2, 20, 'GangCommitted'], [2, 21, 'GangCommitted']]);
    expect(index.story('a')?.events.map((e) => [e.seq, e.index, e.event.type])).toEqual([[1, 0, 'JobPended'], [2, 0, 'GangCommitted']]);
    expect(index.story('zzz')).toBeNull();
    expect(index.decisions()).toHaveLength(2);
  });

  it("puts an elastic gang's resizes in the feed and in its story (DESIGN.md §13)", () => {
    const index = new StoryIndex();
    index.add(1, 10, [committed('e', 10)]);
    const grown: SchedulerEvent = { type: 'GangResized', jobId: 'e', session: 2, at: 30, allocations: [], members: 16 };
    const shrunk: SchedulerEvent = { type: 'GangResized', jobId: 'e', session: 3, at: 40, allocations: [], members: 12, by: 'urgent' };
    expect(index.add(2, 30, [grown]).map((f) => f.event)).toEqual([grown]);
    expect(index.add(3, 40, [shrunk]).map((f) => f.event)).toEqual([shrunk]);
    expect(index.decisions().map((f) => f.event.type)).toEqual(['GangCommitted', 'GangResized', 'GangResized']);
    expect(index.story('e')?.events.map((e) => e.event.type)).toEqual(['GangCommitted', 'GangResized', 'GangResized']);
  });

  it('forgets the job heard of least recently beyond maxJobs', () => {
    const index = new StoryIndex({ maxJobs: 2 });
    index.add(1, 1, [pended('a', 1)]);
    index.add(2, 2, [pended('b', 2)]);
    index.add(3, 3, [pended('a', 3)]);
    index.add(4, 4, [pended('c', 4)]);
    expect(index.size).toBe(2);
    expect(index.story('b')).toBeNull();
    expect(index.story('a')?.events).toHaveLength(2);
  });

  it('keeps the beginning and the end of a long story and counts what it left out', () => {
    const index = new StoryIndex({ maxEventsPerJob: 8 });
    for (let s = 1; s <= 20; s++) index.add(s, s, [pended('a', s)]);
    const story = index.story('a');
    expect(story?.dropped).toBe(12);
    expect(story?.events.map((e) => e.seq)).toEqual([1, 2, 15, 16, 17, 18, 19, 20]);
  });

  it('remembers only the latest decisions', () => {
    const index = new StoryIndex({ recentDecisions: 3 });
    for (let s = 1; s <= 5; s++) index.add(s, s, [committed(`j${s}`, s)]);
    expect(index.decisions().map((d) => d.seq)).toEqual([3, 4, 5]);
  });
});
