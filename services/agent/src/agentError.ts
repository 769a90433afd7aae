/** Stable codes of the errors the agent raises. */
export type AgentErrorCode = 'INVALID_NODE' | 'BAD_LEDGER';

/** An error of the node agent with a stable `code` and a `cause`. */
export class AgentError extends Error {
  readonly code: AgentErrorCode;

  constructor(code: AgentErrorCode, message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'AgentError';
    this.code = code;
  }
}

/** Whether `err` is an agent error, optionally with the given code (works across package copies). */
export function isAgentError(err: unknown, code?: AgentErrorCode): err is AgentError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; code?: unknown };
  return e.name === 'AgentError' && typeof e.code === 'string' && (code === undefined || e.code === code);
}
