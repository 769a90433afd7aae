import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@muster/bus';
import type { ConnectOptions } from '@muster/bus';
import { validateNodeSpec } from '@muster/core';
import type { NodeSpec } from '@muster/core';
import type { Logger } from 'pino';
import { AgentError } from './agentError.ts';
import { hostAddress } from './hostAddress.ts';
import { MemberLedger } from './memberLedger.ts';
import { startNodeAgent } from './nodeAgent.ts';
import type { NodeAgent } from './nodeAgent.ts';
import { createOutputPublisher } from './outputPublisher.ts';
import type { OutputCounts, OutputLimits, OutputPublisher } from './outputPublisher.ts';

/** Options of `startAgent`. */
export interface AgentOptions extends Pick<ConnectOptions, 'user' | 'pass' | 'token' | 'inboxPrefix'> {
  /** NATS url(s). */
  natsUrl: string | string[];
  /** The nodes this process speaks for (one real node, or many simulated ones). */
  nodes: NodeSpec[];
  /**
   * The address the gang's other nodes reach these nodes at, put into each NodeSpec that sets none
   * (default: the host's first non-loopback IPv4, else 127.0.0.1).
   */
  address?: string;
  /** Publish members' output lines on MUSTER_OUTPUT (default true). */
  publishOutput?: boolean;
  /** Limits of the output publishing (batching, buffer). */
  outputLimits?: Partial<OutputLimits>;
  /** Simulate every member: commands are not run, each member finishes after the job's `runtimeMs`. */
  simulate?: boolean;
  /** Milliseconds between heartbeats (default 1000). */
  heartbeatMs?: number;
  logger: Logger;
  /**
   * Folder for each node's ledger of finished members (`<nodeId>.json`), the members' output
   * (`logs/<jobId>.<member>.out`) and the gangs' files (`<nodeId>/gangs/<jobId>.<session>/`); null
   * (the default) keeps the ledger in memory, writes no output files and puts the gangs' files in a
   * temporary folder.
   */
  stateDir?: string | null;
  /** How long a simulated member runs when its job gives no `runtimeMs` (default 2000). */
  defaultRuntimeMs?: number;
  /** Milliseconds between SIGTERM and SIGKILL when a member is stopped (default 5000). */
  stopGraceMs?: number;
  /**
   * Longest a member waits for the members still on its GPU devices to exit before it starts
   * anyway (default: stopGraceMs plus 5 s for the kill to take).
   */
  deviceWaitMs?: number;
}

/** A running agent process: one connection, one node agent per node. */
export interface Agent {
  /** The node ids it speaks for. */
  readonly nodeIds: string[];
  /** Resolves once every node's register input is acknowledged. */
  readonly registered: Promise<void>;
  /** Members running now, over all its nodes. */
  running(): number;
  /** The environment muster gave a member running now on one of its nodes (simulated or real). */
  memberEnv(nodeId: string, jobId: string, member: number): Record<string, string> | undefined;
  /** Output lines published and dropped so far, over all its nodes. */
  outputCounts(): OutputCounts;
  /** Ends heartbeats and consumers, stops running members and closes the connection. */
  stop(): Promise<void>;
}

/**
 * Starts a node agent for `nodes`: each registers, heartbeats, runs the members bound to it and
 * reports their completion. Throws `INVALID_NODE` for a NodeSpec that does not validate.
 */
export async function startAgent(opts: AgentOptions): Promise<Agent> {
  const address = opts.address ?? hostAddress();
  const nodes = opts.nodes.map((node, i) => {
    const valid = validateNodeSpec({ address, ...node });
    if (!valid.ok) throw new AgentError('INVALID_NODE', `node ${i}: ${valid.error.message}`);
    return valid.value;
  });
  const ids = new Set<string>();
  for (const node of nodes) {
    if (ids.has(node.id)) throw new AgentError('INVALID_NODE', `node ${node.id} is given twice`);
    ids.add(node.id);
  }
  const stateDir = opts.stateDir ?? null;
  const ledgers = nodes.map((node) => MemberLedger.open(stateDir === null ? null : join(stateDir, `${node.id}.json`)));
  const auth = { user: opts.user, pass: opts.pass, token: opts.token, inboxPrefix: opts.inboxPrefix };
  const bus = await connect({
    servers: opts.natsUrl,
    name: `muster-agent ${nodes.length === 1 ? nodes[0]?.id : `${nodes.length} nodes`}`,
    onConnection: ({ kind, server, what }) => opts.logger.warn({ component: 'agent', kind, server }, what),
    ...Object.fromEntries(Object.entries(auth).filter(([, v]) => v !== undefined)),
  });
  const bootId = randomBytes(6).toString('hex');
  const filesDir = stateDir ?? join(tmpdir(), `muster-agent-${bootId}`);
  const publishers: OutputPublisher[] = [];
  opts.logger.info({ component: 'agent', nodes: nodes.length, bootId, simulate: opts.simulate ?? false }, 'agent starting');
  const agents: NodeAgent[] = nodes.map((node, i) =>
    startNodeAgent({
      bus,
      node,
      bootId,
      logger: opts.logger,
      heartbeatMs: opts.heartbeatMs ?? 1_000,
      simulate: opts.simulate ?? false,
      defaultRuntimeMs: opts.defaultRuntimeMs ?? 2_000,
      stopGraceMs: opts.stopGraceMs ?? 5_000,
      ...(opts.deviceWaitMs === undefined ? {} : { deviceWaitMs: opts.deviceWaitMs }),
      ledger: ledgers[i] as MemberLedger,
      outputDir: stateDir === null ? null : join(stateDir, 'logs'),
      output: opts.publishOutput === false ? null : publisherOf(node.id),
      filesDir: join(filesDir, node.id),
    }),
  );
  function publisherOf(nodeId: string): OutputPublisher {
    const publisher = createOutputPublisher({ bus, nodeId, logger: opts.logger.child({ component: 'agent' }), ...(opts.outputLimits === undefined ? {} : { limits: opts.outputLimits }) });
    publishers.push(publisher);
    return publisher;
  }
  let stopping: Promise<void> | null = null;
  return {
    nodeIds: agents.map((a) => a.nodeId),
    registered: Promise.all(agents.map((a) => a.registered)).then(() => undefined),
    running: () => agents.reduce((n, a) => n + a.running(), 0),
    memberEnv: (nodeId, jobId, member) => agents.find((a) => a.nodeId === nodeId)?.memberEnv(jobId, member),
    outputCounts: () =>
      publishers.reduce(
        (sum, p) => {
          const c = p.counts();
          return { publishedLines: sum.publishedLines + c.publishedLines, droppedLines: sum.droppedLines + c.droppedLines };
        },
        { publishedLines: 0, droppedLines: 0 },
      ),
    stop() {
      stopping ??= (async () => {
        await Promise.all(agents.map((a) => a.stop()));
        await Promise.all(publishers.map((p) => p.close()));
        if (!bus.isClosed()) await bus.drain();
        opts.logger.info({ component: 'agent' }, 'agent stopped');
      })();
      return stopping;
    },
  };
}
