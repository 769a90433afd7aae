// A gang's story in the dashboard shows its attempt, its last failure and the tail of its members'
// output (DESIGN.md §15), in headless Chromium (Debian's, driven by playwright-core), over a real
// nats-server, a real scheduler and a real agent running the members' commands.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { startAgent } from '@muster/agent';
import type { Agent } from '@muster/agent';
import { MusterClient } from '@muster/client';
import { startScheduler } from '@muster/scheduler';
import type { SchedulerHandle } from '@muster/scheduler';
import { REPO_ROOT } from '@muster/stack';
import { startDashboard } from '@muster/ui';
import type { Dashboard } from '@muster/ui';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';
import { eventually } from '../support/schedulerProcess.ts';
import { chromiumPath } from './chromiumPath.ts';

const logger = pino({ level: 'silent' });

describe("a gang's attempt, failure and output in the dashboard", () => {
  let bus: TestBus;
  let scheduler: SchedulerHandle;
  let agent: Agent;
  let dashboard: Dashboard;
  let browser: Browser;
  let client: MusterClient;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'muster-ui-output-'));
    bus = await startTestBus();
    scheduler = await startScheduler({ natsUrl: bus.urls, id: 'ui', logger, leaseMs: 300, heartbeatTimeoutMs: 0 });
    await eventually(() => scheduler.role() === 'leader', 15_000, 'leadership');
    agent = await startAgent({ natsUrl: bus.urls, nodes: [{ id: 'box', labels: {}, capacity: { cpu: 4000, memoryMb: 4096 }, gpus: [] }], address: '127.0.0.1', heartbeatMs: 200, logger, stateDir: join(dir, 'agent'), stopGraceMs: 500, outputLimits: { flushMs: 50 } });
    client = new MusterClient(bus.bus, { timeoutMs: 5_000 });
    await eventually(async () => (await client.nodes()).length === 1, 15_000, 'the node to register');
    dashboard = await startDashboard({ bus: await bus.client({ name: 'ui' }), port: 0 });
    browser = await chromium.launch({ executablePath: await chromiumPath(), args: ['--no-sandbox', '--disable-gpu'], timeout: 30_000 });
  }, 120_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await dashboard?.close();
    await agent?.stop();
    await scheduler?.stop();
    await bus?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the attempt, the last failure (member, exit code) and each member\'s latest lines', async () => {
    const script = 'echo "hello from $MUSTER_MEMBER attempt $MUSTER_ATTEMPT"; if [ "$MUSTER_MEMBER" = 1 ]; then echo "member 1 gives up" >&2; sleep 0.5; exit 7; fi; sleep 30';
    await client.submit({
      id: 'shaky',
      identity: { user: 'alice', queue: 'default', project: 'ui' },
      roles: [{ name: 'w', count: 2, resources: { cpu: 100, memoryMb: 64 }, command: ['sh', '-c', script] }],
      failurePolicy: { maxRestarts: 1, backoffMs: 200 },
    });
    await eventually(async () => {
      const job = await client.job('shaky');
      return job.status === 'failed' ? job : null;
    }, 30_000, 'shaky to fail after its restart');
    const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
    page.setDefaultTimeout(20_000);
    await page.goto(`${dashboard.url}#job=shaky`);
    const story = page.locator('#story');
    await story.locator('[data-story-job="shaky"]').waitFor();
    const restart = story.locator('[data-story-event="GangRestarting"]').first();
    await restart.waitFor();
    expect(await restart.textContent()).toContain('member 1 on box exited 7: restarting whole as attempt 1, not before');
    await story.locator('[data-output] [data-member="1"][data-attempt="1"]').first().waitFor();
    // member 1's stdout and stderr lines may reach the page in either order (a loaded CI machine
    // delivered the stderr batch first): the tail is read once it holds both
    await story.locator('[data-output]', { hasText: '1 | hello from 1 attempt 1' }).waitFor();
    const output = await story.locator('[data-output]').textContent();
    expect(output).toContain('0 | hello from 0 attempt 1');
    expect(output).toContain('1 | member 1 gives up');
    expect(output).toContain('1 | hello from 1 attempt 1');
    expect(await story.locator('[data-output] .stderr').first().textContent()).toBe('1 | member 1 gives up\n');
    await story.locator('[data-attempt="1"] [data-last-failure="1"]').waitFor();
    expect(await story.locator('p[data-attempt]').textContent()).toMatch(/^attempt 1 · last failure: member 1 on box, exit code 7, at /);
    // MUSTER_SCREENSHOTS=1 rewrites docs/screenshots/job-output.png
    if (process.env.MUSTER_SCREENSHOTS === '1') await page.screenshot({ path: join(REPO_ROOT, 'docs', 'screenshots', 'job-output.png') });
    await page.close();
  }, 90_000);
});
