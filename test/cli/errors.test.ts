// Every way a user can get `muster` wrong ends in one clear line on stderr and an exit code that
// scripts can rely on: 2 for usage and input, 3 for an unreachable NATS, never a stack trace.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBus } from '../support/natsBus.ts';
import { expectOneLineError, runMuster } from './runMuster.ts';

const EXAMPLES = new URL('../../examples/', import.meta.url).pathname;

/** A loopback port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 1;
      server.close(() => resolve(port));
    });
  });
}

describe('muster command-line errors', () => {
  let dir: string;
  let unreachable: string;
  const file = (name: string, content: string): string => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'muster-cli-errors-'));
    unreachable = `nats://127.0.0.1:${await closedPort()}`;
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('an unknown flag is a usage error (exit 2)', async () => {
    expectOneLineError(await runMuster(['jobs', '--frobnicate']), 2, /unknown option '--frobnicate'/);
    expectOneLineError(await runMuster(['jobs', '--limit', '0']), 2, /option '--limit <n>' argument '0' is invalid. must be a positive integer/);
    expectOneLineError(await runMuster(['submit', '--wiat', join(EXAMPLES, 'job.json')]), 2, /unknown option '--wiat'/);
  });

  it('an unknown subcommand is a usage error (exit 2)', async () => {
    expectOneLineError(await runMuster(['sumbit', 'x.json']), 2, /unknown command 'sumbit'/);
  });

  it('a missing argument or a bad flag value is a usage error (exit 2)', async () => {
    expectOneLineError(await runMuster(['explain']), 2, /missing required argument 'job'/);
    expectOneLineError(await runMuster(['up', '--nodes', 'many']), 2, /--nodes.*must be a positive integer/);
    expectOneLineError(await runMuster(['agent']), 2, /exactly one of --node FILE and --simulate N/);
  });

  it('an unreadable file is a usage error naming the file (exit 2)', async () => {
    const missing = join(dir, 'nope.json');
    expectOneLineError(await runMuster(['submit', missing]), 2, new RegExp(`cannot read ${missing}: no such file`));
    expectOneLineError(await runMuster(['submit', dir]), 2, /it is a directory/);
    expectOneLineError(await runMuster(['simulate', missing]), 2, /cannot read/);
  });

  it('a file that is not JSON is a usage error (exit 2)', async () => {
    expectOneLineError(await runMuster(['submit', file('broken.json', '{"id": ')]), 2, /broken\.json is not valid JSON/);
  });

  it('an invalid JobSpec is a usage error naming the field path, before anything is sent (exit 2)', async () => {
    const bad = file('bad-job.json', JSON.stringify({ id: 'j1', identity: { user: 'a' }, roles: [{ name: 'w', count: 0, resources: { cpu: 1, memoryMb: 1 } }] }));
    // the NATS url is unreachable: a usage error must come first, without trying to connect
    expectOneLineError(await runMuster(['submit', bad, '--nats', unreachable]), 2, /bad-job\.json: roles\.0\.count: must be at least 1/);
    const arr = file('bad-array.json', JSON.stringify([{ id: 'ok', identity: { user: 'a' }, tasks: 1, resources: { cpu: 1, memoryMb: 1 } }, { id: 'bad', identity: { user: 'a' }, tasks: 1, resources: { cpu: 1, memoryMb: 1 }, minInstances: 3 }]));
    expectOneLineError(await runMuster(['submit', arr, '--nats', unreachable]), 2, /bad-array\.json\[1\]: minInstances/);
  });

  it('an invalid NodeSpec for the agent is a usage error naming the field path (exit 2)', async () => {
    const node = file('bad-node.json', JSON.stringify({ id: 'n1', capacity: { cpu: -1, memoryMb: 1 } }));
    expectOneLineError(await runMuster(['agent', '--node', node, '--nats', unreachable]), 2, /bad-node\.json: capacity\.cpu/);
  });

  it('an --address that is not a host name or IP, or a node file with bad ports, is a usage error naming the field (exit 2)', async () => {
    const node = file('ok-node.json', JSON.stringify({ id: 'n1', capacity: { cpu: 1000, memoryMb: 1024 } }));
    expectOneLineError(await runMuster(['agent', '--node', node, '--address', 'not a host!', '--nats', unreachable]), 2, /address/);
    const ports = file('bad-ports.json', JSON.stringify({ id: 'n1', capacity: { cpu: 1000, memoryMb: 1024 }, ports: { from: 30000, to: 70000 } }));
    expectOneLineError(await runMuster(['agent', '--node', ports, '--nats', unreachable]), 2, /bad-ports\.json: ports\.to/);
  });

  it('an unreachable NATS is exit 3, quickly', async () => {
    const started = Date.now();
    expectOneLineError(await runMuster(['jobs', '--nats', unreachable, '--timeout', '1000']), 3, new RegExp(`cannot reach NATS at ${unreachable}`));
    expectOneLineError(await runMuster(['submit', join(EXAMPLES, 'job.json'), '--nats', unreachable, '--timeout', '1000']), 3, /cannot reach NATS/);
    expectOneLineError(await runMuster(['cancel', 'j1'], { env: { NATS_URL: unreachable } }), 3, /cannot reach NATS/);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('a NATS with no scheduler answering is exit 3; --direct queues the job in MUSTER_IN instead', async () => {
    const bus = await startTestBus();
    try {
      const url = bus.urls.join(',');
      expectOneLineError(await runMuster(['submit', join(EXAMPLES, 'job.json'), '--nats', url, '--timeout', '2000']), 3, /no muster service answers \(is a scheduler running\?\)/);
      expectOneLineError(await runMuster(['nodes', '--nats', url, '--timeout', '2000']), 3, /no muster service answers/);
      const direct = await runMuster(['submit', join(EXAMPLES, 'job.json'), '--direct', '--nats', url]);
      expect(direct.code).toBe(0);
      expect(direct.stdout).toBe('submitted hello (input 1)\n');
    } finally {
      await bus.stop();
    }
  });

  it('muster up without nats-server says exactly how to install it (exit 3)', async () => {
    const run = await runMuster(['up', '--dir', join(dir, 'up')], { env: { NATS_SERVER_BIN: join(dir, 'no-nats-server') } });
    expectOneLineError(run, 3, /apt-get update && apt-get install -y nats-server/);
  });
});
