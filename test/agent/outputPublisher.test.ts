// Publishing members' output never makes a member wait (DESIGN.md §15): on a real nats-server, a
// member that prints far more than the buffer holds still runs at full speed and its file gets
// every line, while the lines that did not fit are dropped and counted; and with no stream behind
// the subjects every line is counted as dropped, none lost silently.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { readOutput } from '@muster/bus';
import type { BindMessage } from '@muster/core';
import { startAgent } from '@muster/agent';
import { createOutputPublisher } from '@muster/agent/testing';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';
import { eventually } from '../support/schedulerProcess.ts';

const logger = pino({ level: 'silent' });

describe('output publishing never blocks a member', () => {
  let bus: TestBus;
  let dir: string;

  beforeAll(async () => {
    bus = await startTestBus();
    dir = mkdtempSync(join(tmpdir(), 'muster-output-'));
  });

  afterAll(async () => {
    await bus?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a member printing 200,000 lines past a 64 KiB buffer exits at once; its file has every line; the rest are published or counted as dropped', async () => {
    const agent = await startAgent({
      natsUrl: bus.urls,
      nodes: [{ id: 'loud', labels: {}, capacity: { cpu: 1000, memoryMb: 1024 }, gpus: [] }],
      address: '127.0.0.1',
      logger,
      stateDir: join(dir, 'loud'),
      outputLimits: { maxBufferedBytes: 64 * 1024, batchBytes: 16 * 1024, flushMs: 50 },
    });
    try {
      const bind: BindMessage = {
        type: 'Bind', jobId: 'loud-job', session: 1, at: 1,
        parts: [{ role: 'w', members: [0], gpuIds: [], memberGpuIds: [[]], resources: { cpu: 100, memoryMb: 64, gpus: 0 }, command: ['sh', '-c', 'seq 1 200000; echo done >&2'] }],
      };
      const started = Date.now();
      await bus.admin.publish('muster.bind.loud', JSON.stringify(bind), { msgId: 'muster:1:0' });
      const file = join(dir, 'loud', 'logs', 'loud-job.0.out');
      await eventually(() => readFileSync(file, 'utf8').endsWith('200000\ndone\n') || readFileSync(file, 'utf8').endsWith('done\n200000\n'), 20_000, 'every line in the file');
      const elapsed = Date.now() - started;
      const counts = await eventually(() => {
        const c = agent.outputCounts();
        return c.publishedLines + c.droppedLines === 200_001 ? c : null;
      }, 20_000, 'every line published or counted');
      expect(counts.droppedLines).toBeGreaterThan(0);
      expect(counts.publishedLines).toBeGreaterThan(0);
      let stored = 0;
      for await (const m of readOutput(bus.bus, 'loud-job')) stored += (JSON.parse(new TextDecoder().decode(m.data)) as { lines: string[] }).lines.length;
      expect(stored).toBe(counts.publishedLines);
      expect(elapsed, `the member took ${elapsed} ms`).toBeLessThan(10_000);
    } finally {
      await agent.stop();
    }
  });

  it('with no stream behind the output subjects, every line is counted as dropped', async () => {
    const bare = await startTestBus({ ensure: false });
    try {
      const publisher = createOutputPublisher({ bus: (await bare.client()).withTimeout(1_000), nodeId: 'n', logger, limits: { flushMs: 10 } });
      publisher.add('j', 0, 0, 'stdout', ['a', 'b', 'c']);
      publisher.add('j', 1, 0, 'stderr', ['d']);
      await publisher.close();
      expect(publisher.counts()).toEqual({ publishedLines: 0, droppedLines: 4 });
    } finally {
      await bare.stop();
    }
  });
});
