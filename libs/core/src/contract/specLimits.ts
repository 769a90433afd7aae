/**
 * Job and node ids become NATS subject tokens, so they are 1–128 of `A-Z a-z 0-9 _ -`; never
 * `__proto__`, which keys records by id (a node's jobs, usage by user) and cannot hold safely.
 */
export const ID_PATTERN = /^(?!__proto__$)[A-Za-z0-9_-]{1,128}$/;

/** User, queue and project names key DRF usage records, so `__proto__` is refused there too. */
export const NAME_PATTERN = /^(?!__proto__$)/;

/** Node label names: the select language's name syntax, minus `__proto__` (no JSON object can hold it safely). */
export const NODE_LABEL_PATTERN = /^(?!__proto__$)[A-Za-z_][A-Za-z0-9_.-]*$/;

/** Environment variable names a role may set (POSIX portable names, minus `__proto__`). */
export const ENV_NAME_PATTERN = /^(?!__proto__$)[A-Za-z_][A-Za-z0-9_]*$/;

/** Most members one gang may have, over all its roles. */
export const MAX_GANG_SIZE = 4096;

/** Longest `select` source accepted, in characters. */
export const MAX_SELECT_LENGTH = 4096;

/** Bound on `priority` either way. */
export const MAX_PRIORITY = 1_000_000;

/** Longest identity field (user, queue, project), GPU model and label name, in characters. */
export const MAX_NAME_LENGTH = 128;

/** Longest string label value, in characters. */
export const MAX_LABEL_VALUE_LENGTH = 1024;

/** Most GPU devices one node may declare. */
export const MAX_GPUS_PER_NODE = 1024;

/** Fewest and most variants a job's `alternatives` may give (DESIGN.md §13). */
export const MIN_ALTERNATIVES = 2;
export const MAX_ALTERNATIVES = 8;

/** The rendezvous port range a node lends to gangs when its NodeSpec gives none (DESIGN.md §15). */
export const DEFAULT_RENDEZVOUS_PORTS: Readonly<{ from: number; to: number }> = Object.freeze({ from: 29500, to: 29999 });

/** Most restarts a job's `failurePolicy` may allow (DESIGN.md §15). */
export const MAX_RESTARTS = 100;

/** Longest `failurePolicy.backoffMs`: one day. */
export const MAX_BACKOFF_MS = 86_400_000;

/** Most rules a `failurePolicy` may give, and most exit codes one rule may name. */
export const MAX_FAILURE_RULES = 32;
export const MAX_RULE_EXIT_CODES = 256;

/** A DNS host name: labels of letters, digits and `-` (not at either end), dots between, at most 253 characters. An IPv4 address is one. */
const HOSTNAME = '(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*';

/** An IPv6 address in any of its compressed forms (no zone id). */
const IPV6 = [
  '(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}',
  '(?:[0-9A-Fa-f]{1,4}:){1,7}:',
  '(?:[0-9A-Fa-f]{1,4}:){1,6}:[0-9A-Fa-f]{1,4}',
  '(?:[0-9A-Fa-f]{1,4}:){1,5}(?::[0-9A-Fa-f]{1,4}){1,2}',
  '(?:[0-9A-Fa-f]{1,4}:){1,4}(?::[0-9A-Fa-f]{1,4}){1,3}',
  '(?:[0-9A-Fa-f]{1,4}:){1,3}(?::[0-9A-Fa-f]{1,4}){1,4}',
  '(?:[0-9A-Fa-f]{1,4}:){1,2}(?::[0-9A-Fa-f]{1,4}){1,5}',
  '[0-9A-Fa-f]{1,4}:(?::[0-9A-Fa-f]{1,4}){1,6}',
  ':(?:(?::[0-9A-Fa-f]{1,4}){1,7}|:)',
].join('|');

/** A node's address (DESIGN.md §15): a host name, an IPv4 address or an IPv6 address; one pattern, so the JSON Schema states it too. */
export const ADDRESS_PATTERN = new RegExp(`^(?:${HOSTNAME}|${IPV6})$`);
