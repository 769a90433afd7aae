// The dashboard end to end, as a user runs it: a nats-server, two scheduler replica processes, a
// simulated agent process and `muster ui` (the built command line), then headless Chromium
// (Debian's, driven by playwright-core) on the page: jobs appear placed (in the queue and on their
// node's GPUs) and waiting with their reason, a job's story opens from the log, the live feed
// shows decisions, killing the leader moves the replica view to the standby, and the page makes
// no request anywhere but the dashboard. MUSTER_SCREENSHOTS=1 also writes docs/screenshots/*.png.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient } from '@muster/client';
import type { MusterClient } from '@muster/client';
import { REPO_ROOT, cliEntry, createStack, freePort, spawnManaged } from '@muster/stack';
import type { ManagedProcess, SchedulerProcess, Stack } from '@muster/stack';
import { eventually } from '../support/schedulerProcess.ts';
import { chromiumPath } from './chromiumPath.ts';

const identity = (user: string) => ({ user, queue: 'default', project: 'ui' });
const STEP_MS = 20_000;

describe('the dashboard in a real browser', () => {
  let stack: Stack;
  let ui: ManagedProcess;
  let url: string;
  let client: MusterClient;
  let browser: Browser;
  let page: Page;
  const schedulers: SchedulerProcess[] = [];
  const foreign: string[] = [];

  beforeAll(async () => {
    stack = createStack({ graceMs: 3000 });
    const nats = await stack.startNatsServer();
    schedulers.push(stack.spawnScheduler({ id: 's1', urls: [nats.url], leaseMs: 1000, logLevel: 'info' }));
    client = await connectClient(nats.url, { timeoutMs: 2000 });
    await eventually(async () => (await client.nodes().catch(() => null)) !== null, 60_000, 's1 to answer');
    schedulers.push(stack.spawnScheduler({ id: 's2', urls: [nats.url], leaseMs: 1000, logLevel: 'info' }));
    stack.spawnAgent({ urls: [nats.url], simulate: 3, heartbeatMs: 500 });
    const port = await freePort();
    ui = spawnManaged({ name: 'muster ui', command: process.execPath, args: [cliEntry(), 'ui', '--nats', nats.url, '--port', String(port)], logFile: join(stack.dir, 'ui.log'), cwd: REPO_ROOT });
    url = `http://127.0.0.1:${port}/`;
    await eventually(async () => (await fetch(url)).ok, 30_000, `muster ui to serve ${url}:\n${ui.log()}`);
    await eventually(async () => (await client.nodes()).filter((n) => n.status === 'up').length === 3, 30_000, 'three simulated nodes');
    browser = await chromium.launch({ executablePath: await chromiumPath(), args: ['--no-sandbox', '--disable-gpu'], timeout: 30_000 });
    page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
    page.setDefaultTimeout(STEP_MS);
    // every request the page makes must go to the dashboard itself
    page.on('request', (req) => {
      if (!req.url().startsWith(url)) foreign.push(req.url());
    });
    await page.goto(url, { timeout: STEP_MS });
  }, 180_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await client?.disconnect().catch(() => undefined);
    await ui?.terminate(3000);
    await stack?.stop();
  }, 60_000);

  it('shows a gang placed live: in the running table, on its node, on the GPU devices it holds, and in the feed', async () => {
    await page.locator('#live.on').waitFor();
    await client.submit({ id: 'train', identity: identity('alice'), tasks: 2, resources: { cpu: 1000, memoryMb: 1024, gpus: 2 }, runtimeMs: 600_000 });
    const row = page.locator('#running tr[data-job="train"][data-status="running"]');
    await row.waitFor();
    const placed = await client.job('train');
    const nodes = 'nodes' in placed ? placed.nodes : [];
    expect(nodes.length).toBeGreaterThan(0);
    expect(await row.textContent()).toContain(nodes.join(', '));
    for (const node of nodes) await page.locator(`[data-node="${node}"] a[data-job-link="train"]`).waitFor();
    expect(await page.locator('.gpu[data-holder="train"]').count()).toBe(4);
    await page.locator('#feed li[data-decision="GangCommitted"][data-job="train"]').waitFor();
  }, 60_000);

  it('shows an elastic gang at its size, and its growth in the feed (DESIGN.md §13)', async () => {
    // train holds 4 of the 12 GPUs: a gang of 12 one-GPU workers (at least 4) starts with the 8 free
    await client.submit({ id: 'elastic', identity: identity('gina'), roles: [{ name: 'worker', count: 12, minCount: 4, resources: { cpu: 100, memoryMb: 128, gpus: 1 } }], runtimeMs: 600_000 });
    const row = page.locator('#running tr[data-job="elastic"][data-status="running"]');
    await row.waitFor();
    await expect.poll(async () => row.textContent(), { timeout: STEP_MS }).toContain('8/12');
    // train leaves: the elastic gang grows into its GPUs, and the feed says so
    await client.cancel('train');
    const grew = page.locator('#feed li[data-decision="GangResized"][data-job="elastic"]');
    await grew.waitFor();
    expect(await grew.textContent()).toContain('grew to 12 members');
    await expect.poll(async () => row.textContent(), { timeout: STEP_MS }).toContain('12/12');
    expect(await page.locator('.gpu[data-holder="elastic"]').count()).toBe(12);
    // and it leaves the cluster as the tests after it expect
    await client.cancel('elastic');
    await page.locator('#finished tr[data-job="elastic"][data-status="cancelled"]').waitFor();
  }, 60_000);

  it('shows a job that cannot be placed as waiting, with its reason', async () => {
    await client.submit({ id: 'nowhere', identity: identity('bob'), tasks: 1, resources: { cpu: 500, memoryMb: 256 }, select: "zone == 'mars'" });
    const row = page.locator('#pending tr[data-job="nowhere"][data-status="pending"]');
    await row.waitFor();
    await expect.poll(async () => row.textContent(), { timeout: STEP_MS }).toContain('no-matching-hosts');
    await page.locator('#feed li[data-decision="GangAborted"][data-job="nowhere"]').waitFor();
  }, 60_000);

  it('shows a blocked gang reserved, with its expected start, in the queue, the reservations and its story', async () => {
    // only sim-3 (64 cores) can take either; the filler's runtime limit gives the big gang a finite start
    await client.submit({ id: 'filler', identity: identity('dave'), tasks: 1, resources: { cpu: 60_000, memoryMb: 1024 }, runtimeMs: 600_000, runtimeLimitMs: 120_000 });
    await page.locator('#running tr[data-job="filler"]').waitFor();
    await client.submit({ id: 'big', identity: identity('erin'), priority: 10, tasks: 1, resources: { cpu: 64_000, memoryMb: 1024 } });
    const row = page.locator('#pending tr[data-job="big"][data-status="pending"]');
    await row.waitFor();
    const summary = (await client.jobs()).find((j) => j.id === 'big');
    expect(typeof summary?.expectedStart).toBe('number');
    const start = new Date(summary?.expectedStart as number).toLocaleTimeString('en-GB', { hour12: false });
    await expect.poll(async () => row.textContent(), { timeout: STEP_MS }).toContain(start);
    await page.locator('#reservations [data-reservation="big"]').waitFor();
    await page.locator('#feed li[data-decision="GangReserved"][data-job="big"]').waitFor();
    await page.locator('#pending a[data-job-link="big"]').click();
    await page.locator('#story [data-story-event="GangReserved"]').waitFor();
    expect(await page.locator('#story [data-reserved]').textContent()).toContain('sim-3');
    await page.locator('#story-close').click();
  }, 60_000);

  it("opens a job's story from the log, with explain", async () => {
    await client.submit({ id: 'short', identity: identity('carol'), tasks: 1, resources: { cpu: 500, memoryMb: 256 }, runtimeMs: 300 });
    await page.locator('#finished tr[data-job="short"][data-status="succeeded"]').waitFor();
    await page.locator('#finished a[data-job-link="short"]').click();
    const story = page.locator('#story');
    await story.locator('[data-story-job="short"]').waitFor();
    for (const type of ['JobSubmitted', 'GangCommitted', 'TaskCompleted', 'JobFinished']) await story.locator(`[data-story-event="${type}"]`).first().waitFor();
    expect(await story.locator('[data-explain]').textContent()).toContain('job short is succeeded');
    await shot('job-story');
    await page.locator('#story-close').click();
    await page.locator('#story').waitFor({ state: 'hidden' });
    await shot('overview');
  }, 60_000);

  it('follows a takeover: the replica view shows the standby leading after the leader is killed', async () => {
    const leaderRow = page.locator('#replicas tr[data-role="leader"]');
    await leaderRow.waitFor();
    await page.locator('#replicas tr[data-role="standby"]').waitFor();
    const leaderId = await leaderRow.getAttribute('data-replica');
    const leader = schedulers.find((s) => s.id === leaderId);
    expect(leader).toBeDefined();
    await leader?.kill(5000);
    const survivor = schedulers.find((s) => s.id !== leaderId)?.id ?? '';
    await page.locator(`#replicas tr[data-replica="${survivor}"][data-role="leader"]`).waitFor({ timeout: 30_000 });
    await page.locator(`#replicas tr[data-replica="${leaderId}"]`).waitFor({ state: 'detached', timeout: 30_000 });
    // and the new leader decides what the page then shows
    await client.submit({ id: 'after', identity: identity('alice'), tasks: 1, resources: { cpu: 500, memoryMb: 256 }, runtimeMs: 600_000 });
    await page.locator('#running tr[data-job="after"]').waitFor();
    await shot('replicas');
  }, 90_000);

  it('shows the queues an operator defined, with use, guarantee and max, from the scheduler\'s queues.list', async () => {
    // after the other tests: once a queue is defined, new jobs must name one (those before stay in default)
    await client.setQueue({ name: 'research', guaranteed: { gpus: 4, cpu: 8000 }, max: { gpus: 8 } });
    await client.setQueue({ name: 'vision', parent: 'research', guaranteed: { gpus: 2 } });
    await client.submit({ id: 'vis', identity: { user: 'frank', queue: 'vision', project: 'ui' }, tasks: 1, resources: { cpu: 1000, memoryMb: 1024, gpus: 2 }, runtimeMs: 600_000 });
    await page.locator('#running tr[data-job="vis"]').waitFor();
    const research = page.locator('#queues tr[data-queue="research"]');
    await expect.poll(async () => research.textContent(), { timeout: STEP_MS }).toContain('2/4/8');
    expect(await research.textContent()).toContain('1/8/-');
    const vision = page.locator('#queues tr[data-queue="vision"]');
    expect(await vision.textContent()).toContain('2/2/-');
    expect(await vision.getAttribute('data-borrowing')).toBe('false');
    // the jobs accepted before stay in the implicit default queue, shown while it holds them
    expect(await page.locator('#queues tr[data-queue="default"]').textContent()).toContain('implicit');
    // the child is listed right after its parent
    expect(await page.locator('#queues tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-queue')))).toEqual(['default', 'research', 'vision']);
    await shot('queues');
  }, 60_000);

  it('answers bad input with a clean 4xx and a JSON error, and sends its security headers', async () => {
    const cases: [string, RequestInit, number][] = [
      ['nope', {}, 404],
      ['api/nope', {}, 404],
      ['api/jobs/bad.id', {}, 400],
      [`api/jobs/${'x'.repeat(129)}`, {}, 400],
      ['api/jobs/%E0%A4%A', {}, 400],
      ['api/jobs/never-submitted', {}, 404],
      ['api/jobs?status=sleeping', {}, 400],
      ['api/jobs?limit=5', {}, 400],
      ['api/queues?name=a', {}, 400],
      ['app.js?v=1', {}, 400],
      [`api/jobs?status=${'a'.repeat(5000)}`, {}, 414],
      ['api/jobs', { method: 'POST', body: '{}' }, 405],
      ['api/nodes', { method: 'DELETE' }, 405],
    ];
    for (const [path, init, status] of cases) {
      const res = await fetch(`${url}${path}`, init);
      expect([path, res.status]).toEqual([path, status]);
      const body = (await res.json()) as { error?: { code?: string; message?: string } };
      expect(typeof body.error?.code, path).toBe('string');
      expect(body.error?.message, path).toBeTruthy();
    }
    const page = await fetch(url);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('made no request outside the dashboard', () => {
    expect(foreign).toEqual([]);
  });

  async function shot(name: string): Promise<void> {
    if (process.env.MUSTER_SCREENSHOTS !== '1') return;
    const dir = join(REPO_ROOT, 'docs', 'screenshots');
    if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: join(dir, `${name}.png`), fullPage: false });
  }
});
