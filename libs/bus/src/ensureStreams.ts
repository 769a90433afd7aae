import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { JetStreamManager, StreamConfig, StreamInfo } from '@nats-io/jetstream';
import type { Bus } from './bus.ts';
import { BusError } from './busError.ts';
import { isTimeout } from './isWrongLastSequence.ts';
import { natsOf } from './natsBus.ts';
import { sleep } from './sleep.ts';
import { streamDefinitions } from './streamDefinitions.ts';
import type { StreamDefinition, StreamDefinitionKind } from './streamDefinitions.ts';

/** What `ensureStreams` did to one stream. */
export interface EnsuredStream {
  name: string;
  kind: StreamDefinitionKind;
  action: 'created' | 'updated' | 'unchanged';
  /** Settings of the definition the server does not echo back: it ignored them (an older server). */
  ignoredFields: string[];
}

/** Options of `ensureStreams`. */
export interface EnsureStreamsOptions {
  /** Replicas of every stream: 1 on one server, 3 on a three-node cluster. */
  replicas: number;
  /** The definitions to apply; the repository's streams/*.json by default. */
  definitions?: readonly StreamDefinition[];
  /** Called as each stream is ensured, so that what was done is known even when a later one fails. */
  onEnsured?: (stream: EnsuredStream) => void;
  /** How long (ms) in all streams the cluster cannot place yet (or did not answer for) are tried again before giving up: 20,000 by default, 0 not at all. */
  placementWaitMs?: number;
  /** Ends a placement wait early (a replica stopping), with the same error as running out of time. */
  signal?: AbortSignal;
}

// limits where a smaller value (or a limit where there was none) makes the server drop messages
const RETENTION_LIMITS = ['max_msgs', 'max_bytes', 'max_age', 'max_msgs_per_subject'] as const;
const STREAM_NAME_IN_USE = 10058;
const NO_SUITABLE_PEERS = 10005;
const PLACEMENT_WAIT_MS = 20_000;
// the first pause between tries, doubled after each up to the last
const PLACEMENT_PAUSES_MS = { first: 100, last: 2_000 } as const;

/**
 * Creates each stream, KV bucket and object store that is missing and updates those whose settings
 * differ, idempotently; it never deletes or purges, refuses an update that would drop messages, and
 * tries a stream again while the cluster cannot place it yet (for `placementWaitMs`).
 */
export async function ensureStreams(bus: Bus, opts: EnsureStreamsOptions): Promise<EnsuredStream[]> {
  const jsm = await natsOf(bus).jsm;
  const results: EnsuredStream[] = [];
  // one bound for the whole call: once the cluster places one stream, it places the others
  const start = performance.now();
  for (const def of opts.definitions ?? streamDefinitions) {
    const tries: Tries = { foundMissing: false };
    const ensured = await oncePlaced(() => ensureOne(jsm, def, opts.replicas, tries), def.config.name, start, opts);
    opts.onEnsured?.(ensured);
    results.push(ensured);
  }
  return results;
}

/**
 * `attempt`, again with growing pauses while the server has no peers to place the stream on or
 * gives no answer, until `placementWaitMs` after `start`; any other error is thrown at once.
 */
async function oncePlaced<T>(attempt: () => Promise<T>, name: string, start: number, opts: EnsureStreamsOptions): Promise<T> {
  const waitMs = opts.placementWaitMs ?? PLACEMENT_WAIT_MS;
  for (let pause: number = PLACEMENT_PAUSES_MS.first; ; pause = Math.min(PLACEMENT_PAUSES_MS.last, pause * 2)) {
    try {
      return await attempt();
    } catch (err) {
      // an unanswered request may have been applied: trying again is safe (info, then create or
      // compare), and a just-formed 2.15.1 cluster left a create unanswered for 5 s (1 in about 200)
      if (!placementPending(err) && !isTimeout(err)) throw err;
      const waited = performance.now() - start;
      if (waited >= waitMs || opts.signal?.aborted === true) {
        throw new BusError(
          'STREAM_NOT_PLACED',
          `cannot place ${name} on ${opts.replicas} peers: the cluster is still forming or placing (a node not joined yet or offline, or fewer nodes than replicas, or no answer); gave up after ${Math.round(waited)} ms (${(err as Error).message})`,
          { cause: err },
        );
      }
      await sleep(Math.min(pause, waitMs - waited), opts.signal);
    }
  }
}

/**
 * Whether the server could not place a stream for want of peers that waiting can bring: API error
 * 10005 naming no reason or only "peer offline". Both 2.9.10 and 2.15.1 name no reason while a
 * node has not joined the cluster yet (and also for more replicas than nodes, which waiting cannot
 * fix but cannot be told apart); 2.9.10 says "peer offline" while a node is down, 2.15 while its
 * meta leader has not yet heard a new peer's stats (one node of three down does not stop 2.15 placing
 * R3). A reason waiting cannot change (such as "tags not matched […]") fails at once.
 */
function placementPending(err: unknown): boolean {
  if (!(err instanceof JetStreamApiError) || err.code !== NO_SUITABLE_PEERS) return false;
  const reasons = err.message.replace(/^.*no suitable peers for placement/i, '').split(',').map((r) => r.trim()).filter((r) => r !== '');
  return reasons.every((r) => r === 'peer offline');
}

// what the earlier tries of one stream saw
interface Tries {
  foundMissing: boolean;
}

async function ensureOne(jsm: JetStreamManager, def: StreamDefinition, replicas: number, tries: Tries): Promise<EnsuredStream> {
  const desired = { ...def.config, num_replicas: replicas } as Partial<StreamConfig> & { name: string };
  const result = (action: EnsuredStream['action'], info: StreamInfo): EnsuredStream => ({
    name: desired.name,
    kind: def.kind,
    action,
    ignoredFields: ignoredFields(desired, info.config),
  });
  const missingBefore = tries.foundMissing;
  let existing = await streamInfo(jsm, desired.name);
  if (existing === null) {
    tries.foundMissing = true;
    try {
      // a copy: the client writes mirror and sources keys into the object it is given
      return result('created', await jsm.streams.add({ ...desired }));
    } catch (err) {
      // another process created it between our look and our create: compare with theirs
      if (!(err instanceof JetStreamApiError && err.code === STREAM_NAME_IN_USE)) throw err;
      existing = await streamInfo(jsm, desired.name);
      if (existing === null) throw err;
    }
  }
  const changed = changedFields(desired, existing.config);
  // missing at an earlier try whose create got no answer: that create was applied (or another
  // replica's was), and what the stream held is gone all the same
  if (changed.length === 0) return result(missingBefore ? 'created' : 'unchanged', existing);
  const unsafe = RETENTION_LIMITS.filter((key) => changed.includes(key) && dropsMessages(desired[key], existing.config[key]));
  if (unsafe.length > 0) {
    throw new BusError(
      'UNSAFE_STREAM_UPDATE',
      `refusing to update ${desired.name}: tightening ${unsafe.join(', ')} would drop stored messages`,
    );
  }
  return result('updated', await jsm.streams.update(desired.name, { ...desired }));
}

async function streamInfo(jsm: JetStreamManager, name: string): Promise<StreamInfo | null> {
  try {
    return await jsm.streams.info(name);
  } catch (err) {
    if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) return null;
    throw err;
  }
}

function changedFields(desired: Record<string, unknown>, actual: Record<string, unknown>): string[] {
  return Object.keys(desired).filter((key) => {
    // a field the server does not know is ignored by it: updating cannot change that
    if (!(key in actual)) return false;
    return !sameValue(desired[key], actual[key]);
  });
}

function ignoredFields(desired: Record<string, unknown>, actual: Record<string, unknown>): string[] {
  // servers omit false, zero and empty settings from their answer, so only a set value counts as ignored
  return Object.keys(desired).filter((key) => !(key in actual) && !isEmptySetting(desired[key]));
}

function isEmptySetting(value: unknown): boolean {
  return value === false || value === 0 || value === '' || value === null || (Array.isArray(value) && value.length === 0);
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => sameValue(item, b[i]));
  }
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
    const ka = Object.keys(a);
    const ra = a as Record<string, unknown>;
    const rb = b as Record<string, unknown>;
    return ka.length === Object.keys(b).length && ka.every((key) => sameValue(ra[key], rb[key]));
  }
  return a === b;
}

function dropsMessages(desired: unknown, actual: unknown): boolean {
  const limit = (v: unknown): number => (typeof v === 'number' && v > 0 ? v : Number.POSITIVE_INFINITY);
  return limit(desired) < limit(actual);
}
