// muster's own processes and libraries under the deployment's users, on the cluster started from
// deploy/nats: a real scheduler replica connected as `scheduler`, a node reported as `agent-n1`,
// `muster agent --simulate` as `simulator`, jobs submitted through the API and watched as
// `submitter`, the state and the log read as `auditor`. No server logs a permission violation.
import { DECISIONS_STREAM, publishInput, readLog, subjectMessages } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { MusterClient } from '@muster/client';
import { spawnAgent } from '@muster/stack';
import type { AgentProcess } from '@muster/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDeployedCluster } from '../support/natsConfig.ts';
import type { DeployedCluster } from '../support/natsConfig.ts';
import { eventually, replicaStatus, spawnScheduler } from '../support/schedulerProcess.ts';
import type { SchedulerProcess } from '../support/schedulerProcess.ts';

let cluster: DeployedCluster;
let scheduler: SchedulerProcess | undefined;
let simulator: AgentProcess | undefined;
const connections: Bus[] = [];

async function login(user: string): Promise<Bus> {
  const bus = await cluster.connectAs(user);
  connections.push(bus);
  return bus;
}

/** What docker-compose.yml gives a muster service of this role. */
function roleEnv(user: string): NodeJS.ProcessEnv {
  const { pass, inboxPrefix } = cluster.credentials(user);
  return { ...process.env, NATS_USER: user, NATS_PASSWORD: pass, ...(inboxPrefix === undefined ? {} : { NATS_INBOX_PREFIX: inboxPrefix }) };
}

beforeAll(async () => {
  cluster = await startDeployedCluster();
  scheduler = spawnScheduler({ id: 's1', urls: cluster.urls, replicas: 3, leaseMs: 500, env: roleEnv('scheduler') });
}, 120_000);

afterAll(async () => {
  try {
    await Promise.all(connections.map((bus) => bus.close()));
    await Promise.all([simulator?.terminate(), scheduler?.terminate()]);
  } finally {
    await cluster?.stop();
  }
});

describe('muster under the deployment\'s users', () => {
  it('places a job submitted through the API on the node that registered itself, and the agent sees its bind', async () => {
    const auditor = await login('auditor');
    await eventually(async () => (await replicaStatus(auditor, 's1'))?.role === 'leader', 30_000, `s1 to lead:\n${scheduler?.log() ?? ''}`);

    const agent = await login('agent-n1');
    const node = { id: 'n1', labels: { zone: 'a' }, capacity: { cpu: 4000, memoryMb: 8192 }, gpus: [] };
    await publishInput(agent, 'muster.in.node.n1.register', node, 'n1:register:e2e:1');

    const client = new MusterClient(await login('submitter'), { timeoutMs: 10_000 });
    const spec = { id: 'e2e-1', identity: { user: 'alice', queue: 'default', project: 'p1' }, tasks: 2, resources: { cpu: 500, memoryMb: 256 } };
    const submitted = await client.submit(spec, { via: 'api' });
    expect(submitted.jobId).toBe('e2e-1');
    const decision = await client.wait('e2e-1', { timeoutMs: 30_000 });
    expect(decision).toMatchObject({ type: 'GangCommitted', jobId: 'e2e-1', allocations: [expect.objectContaining({ node: 'n1', members: [0, 1] })] });

    for await (const m of subjectMessages(agent, DECISIONS_STREAM, 'muster.bind.n1')) {
      expect(JSON.parse(new TextDecoder().decode(m.data))).toMatchObject({ type: 'Bind', jobId: 'e2e-1' });
      break;
    }
    for (const member of [0, 1]) {
      await publishInput(agent, 'muster.in.node.n1.done', { jobId: 'e2e-1', member, ok: true }, `n1:done:e2e:${member}`);
    }
    await eventually(async () => (await client.job('e2e-1')).status === 'succeeded', 30_000, 'e2e-1 to succeed');

    const reader = new MusterClient(auditor, { timeoutMs: 10_000 });
    expect((await reader.jobs()).map((j) => j.id)).toContain('e2e-1');
    expect((await reader.nodes()).map((n) => n.id)).toEqual(['n1']);
    const types: string[] = [];
    for await (const { tx } of readLog(auditor)) types.push(...tx.events.map((e) => e.type));
    expect(types).toEqual(expect.arrayContaining(['LeaderElected', 'NodeRegistered', 'JobSubmitted', 'GangCommitted', 'TaskCompleted', 'JobFinished']));

  });

  it('runs jobs on `muster agent --simulate` connected as the simulator, as in docker-compose.yml', async () => {
    simulator = spawnAgent({ urls: cluster.urls, simulate: 2, env: roleEnv('simulator') });
    const client = new MusterClient(await login('submitter'), { timeoutMs: 10_000 });
    await eventually(async () => (await client.nodes()).filter((n) => n.id.startsWith('sim-')).length === 2, 30_000, `simulated nodes:\n${simulator.logFile}`);
    // GPU nodes only: n1 of the first test has no agent running its members
    const spec = { id: 'e2e-sim', identity: { user: 'bob', queue: 'default', project: 'p1' }, tasks: 2, resources: { cpu: 500, memoryMb: 256, gpus: 1 }, select: "kind == 'gpu'", runtimeMs: 200 };
    await client.submit(spec, { via: 'api' });
    expect(await client.wait('e2e-sim', { timeoutMs: 30_000 })).toMatchObject({ type: 'GangCommitted', allocations: [expect.objectContaining({ node: 'sim-2' })] });
    await eventually(async () => (await client.job('e2e-sim')).status === 'succeeded', 30_000, 'e2e-sim to succeed');
  });

  it('left no permission violation in any server\'s log', () => {
    const violations = cluster.nodes.flatMap((n) => n.log().split('\n')).filter((line) => line.includes('Violation'));
    expect(violations).toEqual([]);
  });
});
