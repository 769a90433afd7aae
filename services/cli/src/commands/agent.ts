import { Command } from 'commander';
import type { Agent } from '@muster/agent';
import type { NodeSpec, Validated } from '@muster/core';
import { CliError, EXIT } from '../cliError.ts';
import { natsTarget, positiveInt, withNatsOptions } from '../natsOptions.ts';
import type { NatsFlags } from '../natsOptions.ts';
import { readJsonFile } from '../readJsonFile.ts';
import { serviceLogger } from '../serviceLogger.ts';
import { untilStopped } from '../untilStopped.ts';

interface AgentFlags extends NatsFlags {
  node?: string;
  simulate?: number;
  runCommands?: boolean;
  heartbeatMs: number;
  stateDir?: string;
  logLevel?: string;
  deviceWaitMs?: number;
  address?: string;
}

/** `muster agent --node FILE | --simulate N`: a node agent until Ctrl-C. */
export function agentCommand(): Command {
  return withNatsOptions(new Command('agent'))
    .description('run a node agent for the node(s) in a NodeSpec file, or for N simulated nodes, until interrupted')
    .option('--node <file>', 'NodeSpec JSON file (or a JSON array of NodeSpecs)')
    .option('--simulate <n>', 'speak for n simulated nodes sim-1 … sim-n (members finish after their runtimeMs)', positiveInt)
    .option('--run-commands', 'with --simulate: still run the commands of roles that have one')
    .option('--address <host>', "the hostname or IP the gang's other nodes reach this node at, for nodes whose NodeSpec sets none (default: the host's first non-loopback IPv4, else 127.0.0.1)")
    .option('--heartbeat-ms <ms>', 'milliseconds between heartbeats', positiveInt, 1000)
    .option('--state-dir <dir>', 'where the agent keeps finished members and their output (default with --node: .muster/agent)')
    .option('--device-wait-ms <ms>', 'longest a member waits for the stopped members still on its GPU devices to exit before it starts anyway (default: the stop grace + 5000)', positiveInt)
    .option('--log-level <level>', 'pino log level (default: $LOG_LEVEL or info)')
    .action(async (flags: AgentFlags) => {
      if ((flags.node === undefined) === (flags.simulate === undefined)) {
        throw new CliError(EXIT.usage, 'usage', 'give exactly one of --node FILE and --simulate N');
      }
      // loaded here, so the other subcommands start fast and do not depend on the agent's code
      const [{ isAgentError, simulatedNodes, startAgent }, { validateNodeSpec }] = await Promise.all([import('@muster/agent'), import('@muster/core')]);
      const nodes = flags.node === undefined ? simulatedNodes(flags.simulate ?? 0) : readNodes(flags.node, validateNodeSpec);
      const logger = await serviceLogger(flags.logLevel);
      const target = natsTarget(flags);
      const stateDir = flags.stateDir ?? (flags.node === undefined ? null : '.muster/agent');
      // Ctrl-C while starting still ends in a clean stop once started
      const stopRequested = untilStopped();
      let agent: Agent;
      try {
        agent = await startAgent({
          natsUrl: target.servers,
          nodes,
          ...(flags.address === undefined ? {} : { address: flags.address }),
          simulate: flags.simulate !== undefined && flags.runCommands !== true,
          heartbeatMs: flags.heartbeatMs,
          logger,
          stateDir,
          ...(flags.deviceWaitMs === undefined ? {} : { deviceWaitMs: flags.deviceWaitMs }),
          ...target.auth,
        });
      } catch (err) {
        if (isAgentError(err)) throw err;
        throw new CliError(EXIT.unreachable, 'unreachable', `cannot reach NATS at ${target.servers.join(',')}: ${(err as Error).message}`, { cause: err });
      }
      await stopRequested;
      await agent.stop();
    });
}

function readNodes(file: string, validateNodeSpec: (input: unknown) => Validated<NodeSpec>): NodeSpec[] {
  const content = readJsonFile(file);
  const many = Array.isArray(content);
  const bodies: unknown[] = many ? content : [content];
  if (bodies.length === 0) throw new CliError(EXIT.usage, 'invalid', `${file}: the array holds no NodeSpec`);
  return bodies.map((body, i) => {
    const valid = validateNodeSpec(body);
    if (!valid.ok) throw new CliError(EXIT.usage, 'invalid', `${many ? `${file}[${i}]` : file}: ${valid.error.message}`);
    return valid.value;
  });
}
