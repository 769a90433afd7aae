import { publishInput, sleep, subjects } from '@muster/bus';
import type { Bus } from '@muster/bus';
import type { Logger } from 'pino';

/** The inputs a node agent sends about its own node. */
export type NodeInputKind = 'register' | 'drain' | 'done';

/** Sends one node's inputs into MUSTER_IN, each under a msg id of its own. */
export interface InputReporter {
  /** A fresh msg id `<nodeId>:<kind>:<bootId>:<counter>`. */
  nextMsgId(kind: NodeInputKind): string;
  /**
   * Publishes on `muster.in.node.<nodeId>.<kind>` and retries (same msg id, so the stream keeps one)
   * until it is acknowledged; resolves with the input's sequence, or null if `signal` aborted first.
   */
  send(kind: NodeInputKind, body: unknown, msgId?: string): Promise<number | null>;
}

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5_000;

/** An input reporter for one node, for this boot of the agent. */
export function createInputReporter(deps: {
  bus: Bus;
  nodeId: string;
  bootId: string;
  logger: Logger;
  signal: AbortSignal;
}): InputReporter {
  let counter = 0;
  const nextMsgId = (kind: NodeInputKind): string => `${deps.nodeId}:${kind}:${deps.bootId}:${++counter}`;
  return {
    nextMsgId,
    async send(kind, body, msgId = nextMsgId(kind)) {
      const subject = subjects.nodeInput(deps.nodeId, kind);
      let wait = FIRST_RETRY_MS;
      for (let attempt = 1; !deps.signal.aborted; attempt++) {
        try {
          return (await publishInput(deps.bus, subject, body, msgId)).seq;
        } catch (err) {
          // NATS away or the stream not created yet: the input is not lost, only late
          const log = attempt === 1 ? deps.logger.warn.bind(deps.logger) : deps.logger.debug.bind(deps.logger);
          log({ err, subject, msgId, attempt }, 'input not acknowledged; retrying');
        }
        await sleep(wait, deps.signal);
        wait = Math.min(wait * 2, MAX_RETRY_MS);
      }
      return null;
    },
  };
}
