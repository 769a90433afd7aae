// A replica whose log stream cannot be written (its file on a full disk) keeps leading: pino's
// destination emits the write error, and a process with no listener for it died on the first line
// (ENOSPC in the drill's full-disk fault). The replica runs as its own process (dist/), its stdout
// on /dev/full, where every write fails with ENOSPC.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, publishInput, subjects } from '@muster/bus';
import { schedulerEntry } from '@muster/stack';
import { startNatsServer } from '../support/natsServer.ts';
import { eventually, replicaStatus } from '../support/schedulerProcess.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a replica whose log stream fails', () => {
  it('keeps leading and deciding, and says once on stderr that its log cannot be written', async () => {
    const server = await startNatsServer();
    cleanups.push(() => server.stop());
    const full = openSync('/dev/full', 'w');
    cleanups.push(() => closeSync(full));
    const child: ChildProcess = spawn(process.execPath, [schedulerEntry(), '--id', 'full', '--nats', server.url, '--log-level', 'debug', '--lease-ms', '300'], { stdio: ['ignore', full, 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    let exited: number | null = null;
    child.on('exit', (code) => (exited = code ?? -1));
    cleanups.push(() => {
      if (exited === null) child.kill('SIGKILL');
    });
    const bus = await connect({ servers: server.url, name: 'test' });
    cleanups.push(() => bus.close());

    await eventually(async () => (await replicaStatus(bus, 'full'))?.role === 'leader' || null, 20_000, 'the replica leading');
    const node = { id: 'f1', labels: {}, capacity: { cpu: 1000, memoryMb: 1024, slots: 4 }, gpus: [] };
    await publishInput(bus, subjects.nodeInput('f1', 'register'), node, 'f1:register:1');
    await publishInput(bus, 'muster.in.submit', { id: 'j1', identity: { user: 'alice' }, tasks: 1, resources: { cpu: 10, memoryMb: 10 } }, 'j1:1');
    // every line it logs fails: still there, still leading, the job decided
    await eventually(async () => ((await replicaStatus(bus, 'full'))?.seq ?? 0) >= 4 || null, 20_000, 'the job decided');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(exited).toBeNull();
    expect((await replicaStatus(bus, 'full'))?.role).toBe('leader');
    expect(stderr).toContain('the log stream failed (ENOSPC)');
    expect(stderr.match(/the log stream failed/g)).toHaveLength(1);
  }, 60_000);
});
