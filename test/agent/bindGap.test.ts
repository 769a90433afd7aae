// A node agent whose consumer skips a bind (as one served from a NATS node's copy with a hole
// does, while that node refills its store) still runs it: the reader notices it was given fewer
// messages than the stream holds on its subject, resumes, and when still short reads the subject
// again from its start, without running a member twice. Real nats-server; only the agent's reader
// is wrapped, to lose one stored message the way such a consumer does.
import { tmpdir } from 'node:os';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { DECISIONS_STREAM, readInputs, subjectCount, subjectMessages } from '@muster/bus';
import type { StreamMessage } from '@muster/bus';
import type { BindMessage, NodeSpec } from '@muster/core';
import { MemberLedger } from '@muster/agent/testing';
import { startNodeAgent } from '@muster/agent/testing';
import type { NodeAgent } from '@muster/agent/testing';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';
import { eventually } from '../support/schedulerProcess.ts';

const node = (id: string): NodeSpec => ({ id, labels: {}, capacity: { cpu: 64_000, memoryMb: 65_536, slots: 64 }, gpus: [] });

const bind = (jobId: string): BindMessage => ({
  type: 'Bind',
  jobId,
  session: 1,
  at: 1,
  runtimeMs: 50,
  parts: [{ role: 'worker', members: [0], gpuIds: [], memberGpuIds: [[]], resources: { cpu: 100, memoryMb: 64, gpus: 0 } }],
});

describe('a node agent whose consumer skips a stored bind', () => {
  let bus: TestBus;
  let seq = 0;
  const agents: NodeAgent[] = [];

  beforeAll(async () => {
    bus = await startTestBus();
  });

  afterAll(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    await bus?.stop();
  });

  const publishBind = async (nodeId: string, jobId: string): Promise<number> => {
    seq += 1;
    const ack = await bus.admin.publish(`muster.bind.${nodeId}`, JSON.stringify(bind(jobId)), { msgId: `muster:${seq}:0` });
    return ack.seq;
  };

  // The agent's reader, except that its first read of the bind subject never yields `lost`.
  const holeyReader = (lost: () => number | null) => {
    let bindReads = 0;
    return async function* (subject: string, fromSeq: number, signal: AbortSignal): AsyncGenerator<StreamMessage> {
      if (subject.startsWith('muster.bind.')) bindReads += 1;
      const holey = bindReads === 1 && subject.startsWith('muster.bind.');
      for await (const m of subjectMessages(bus.bus, DECISIONS_STREAM, subject, { fromSeq, signal })) {
        if (holey && m.seq === lost()) continue;
        yield m;
      }
    };
  };

  type Read = (subject: string, fromSeq: number, signal: AbortSignal) => AsyncGenerator<StreamMessage>;
  const start = (nodeId: string, lost: () => number | null, counted: string[] = [], read: Read = holeyReader(lost)): { lines: string[] } => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    agents.push(
      startNodeAgent({
        bus: bus.bus,
        node: node(nodeId),
        bootId: 'test',
        logger: pino({ level: 'warn' }, sink),
        heartbeatMs: 1_000,
        simulate: true,
        defaultRuntimeMs: 50,
        stopGraceMs: 100,
        ledger: MemberLedger.open(null),
        outputDir: null,
        output: null,
        filesDir: tmpdir(),
        stallMs: 200,
        censusMs: 600,
        read,
        count: (subject) => {
          counted.push(subject);
          return subjectCount(bus.bus, DECISIONS_STREAM, subject);
        },
      }),
    );
    return { lines };
  };

  const doneJobs = async (nodeId: string): Promise<string[]> => {
    const jobs: string[] = [];
    for await (const input of readInputs(bus.bus)) {
      if (input.subject === `muster.in.node.${nodeId}.done`) jobs.push((JSON.parse(input.data) as { jobId: string }).jobId);
    }
    return jobs;
  };

  // every job done on `nodeId`, once the one named 'skipped' is among them
  const skippedRun = (nodeId: string): Promise<string[]> =>
    eventually(
      async () => {
        const all = await doneJobs(nodeId);
        return all.includes('skipped') ? all : null;
      },
      15_000,
      'the skipped bind run',
    );

  it('while binds keep coming: it runs the skipped bind, and every other member once', async () => {
    let lost: number | null = null;
    const { lines } = start('gap-busy', () => lost);
    lost = await publishBind('gap-busy', 'skipped');
    // a bind every poll (about 50 ms): the reader is never silent, so only the census can notice the hole
    const others: string[] = [];
    const done = await eventually(
      async () => {
        const jobId = `other-${others.length}`;
        others.push(jobId);
        await publishBind('gap-busy', jobId);
        const jobs = await doneJobs('gap-busy');
        return jobs.includes('skipped') ? jobs : null;
      },
      15_000,
      'the skipped bind run',
    );
    const settled = await eventually(
      async () => {
        const jobs = await doneJobs('gap-busy');
        return others.every((o) => jobs.includes(o)) ? jobs : null;
      },
      10_000,
      'every other bind run',
    );
    expect(done).toContain('skipped');
    // read again from the start, yet nothing ran twice
    expect(settled.filter((j) => j === 'skipped')).toHaveLength(1);
    expect(new Set(settled).size).toBe(settled.length);
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toContain('bind or stop reader skipped messages; reading the subject again from its start');
  });

  it('when no more binds come: it resumes, is still short, and reads the subject from its start', async () => {
    await publishBind('gap-quiet', 'first');
    const lost = await publishBind('gap-quiet', 'skipped');
    await publishBind('gap-quiet', 'last');
    const { lines } = start('gap-quiet', () => lost);
    const jobs = await skippedRun('gap-quiet');
    expect(jobs.sort()).toEqual(['first', 'last', 'skipped']);
    const warned = lines.map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(warned).toContain('bind or stop reader stalled; resubscribing');
    expect(warned).toContain('bind or stop reader skipped messages; reading the subject again from its start');
  });

  it('when its resubscribed consumer delivers the subject again from its start: the re-delivery does not hide the skipped bind', async () => {
    await publishBind('gap-redelivered', 'first');
    const lost = await publishBind('gap-redelivered', 'skipped');
    await publishBind('gap-redelivered', 'last');
    // the first read skips the bind; the second (the resubscription, asked to start after 'last')
    // delivers from sequence 1 instead, still without it, as a consumer on a NATS node refilling its
    // store did in a drill at 200 gangs/s (50 gangs stopped at their runtime limit)
    let bindReads = 0;
    const read = async function* (subject: string, fromSeq: number, signal: AbortSignal): AsyncGenerator<StreamMessage> {
      if (!subject.startsWith('muster.bind.')) {
        yield* subjectMessages(bus.bus, DECISIONS_STREAM, subject, { fromSeq, signal });
        return;
      }
      bindReads += 1;
      const from = bindReads === 2 ? 1 : fromSeq;
      for await (const m of subjectMessages(bus.bus, DECISIONS_STREAM, subject, { fromSeq: from, signal })) {
        if (bindReads <= 2 && m.seq === lost) continue;
        yield m;
      }
    };
    const { lines } = start('gap-redelivered', () => null, [], read);
    const jobs = await skippedRun('gap-redelivered');
    expect(jobs.sort()).toEqual(['first', 'last', 'skipped']);
    expect(bindReads).toBeGreaterThanOrEqual(3);
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toContain('bind or stop reader skipped messages; reading the subject again from its start');
  });

  it('while nothing comes and nothing is missing: its counts back off, doubling up to censusMs', async () => {
    const counted: string[] = [];
    start('quiet-counts', () => null, counted);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const binds = counted.filter((c) => c === 'muster.bind.quiet-counts').length;
    // every 200 ms (stallMs) it would be about 15; doubling from 200 ms to 600 ms (censusMs): about 5
    expect(binds).toBeGreaterThanOrEqual(2);
    expect(binds).toBeLessThanOrEqual(8);
  });
});
