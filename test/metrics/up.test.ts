// What a newcomer sees after `npm start` (muster up): the dashboard's and the metrics' addresses
// printed, the page served, and /metrics, scraped while the sample workload runs, agreeing with
// `muster jobs` and `muster nodes` at the same log sequence.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '@muster/stack';
import type { JobSummary, NodeSummary } from '@muster/client';
import { eventually } from '../support/schedulerProcess.ts';
import { runMuster, spawnMuster } from '../cli/runMuster.ts';
import { parse, value } from './promText.ts';

describe('muster up with metrics and the dashboard', () => {
  const dir = mkdtempSync(join(tmpdir(), 'muster-up-metrics-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints both addresses, serves the page, and /metrics matches muster jobs and muster nodes', async () => {
    const [uiPort, metricsPort] = [await freePort(), await freePort()];
    const up = spawnMuster(['up', '--nodes', '3', '--duration', '90', '--ui-port', String(uiPort), '--metrics-port', String(metricsPort)], { cwd: dir, timeoutMs: 150_000 });
    try {
      await eventually(() => / placed /.test(up.output().stdout), 120_000, `a first placement:\n${up.output().stdout}${up.output().stderr}`);
      const out = up.output().stdout;
      expect(out).toMatch(new RegExp(`^dashboard {4}http://127\\.0\\.0\\.1:${uiPort}/$`, 'm'));
      expect(out).toMatch(new RegExp(`^metrics {6}http://127\\.0\\.0\\.1:${metricsPort}/metrics$`, 'm'));
      const nats = /^nats-server {2}(nats:\/\/\S+)/m.exec(out)?.[1] ?? '';
      const page = await fetch(`http://127.0.0.1:${uiPort}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<script type="module" src="/app.js">');
      const metrics = async () => parse(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text());
      // the workload moves: compare only when the log did not move between the two scrapes
      const agreed = await eventually(async () => {
        const before = await metrics();
        const [jobs, nodes] = await Promise.all([
          runMuster(['jobs', '--json', '--nats', nats]).then((r) => JSON.parse(r.stdout) as JobSummary[]),
          runMuster(['nodes', '--json', '--nats', nats]).then((r) => JSON.parse(r.stdout) as NodeSummary[]),
        ]);
        const after = await metrics();
        const seq = value(before, 'muster_log_sequence');
        return seq !== undefined && seq === value(after, 'muster_log_sequence') ? { samples: after, jobs, nodes } : null;
      }, 60_000, 'a quiet moment to compare');
      const { samples, jobs, nodes } = agreed;
      for (const state of ['pending', 'running', 'succeeded', 'failed']) {
        expect([state, value(samples, 'muster_jobs', { state })]).toEqual([state, jobs.filter((j) => j.status === state).length]);
      }
      expect(value(samples, 'muster_nodes', { state: 'up' })).toBe(nodes.filter((n) => n.status === 'up').length);
      expect(value(samples, 'muster_allocated', { resource: 'cpu' })).toBe(nodes.reduce((s, n) => s + n.cpu.used, 0));
      expect(value(samples, 'muster_allocated', { resource: 'gpus' })).toBe(nodes.reduce((s, n) => s + n.gpus.used, 0));
      expect(value(samples, 'muster_capacity', { resource: 'memoryMb' })).toBe(nodes.reduce((s, n) => s + n.memoryMb.total, 0));
      expect(value(samples, 'muster_replica_leader')).toBe(1);
    } finally {
      up.child.kill('SIGINT');
    }
    const run = await up.exited;
    expect(run.code).toBe(0);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe('stopped');
  }, 180_000);
});
