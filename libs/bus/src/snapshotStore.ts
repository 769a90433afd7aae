import { CanonicalCache, canonicalBytes, canonicalChunks } from '@muster/core';
import { Objm, setSha256Backend } from '@nats-io/obj';
import type { ObjectInfo, ObjectStore } from '@nats-io/obj';

import type { Bus } from './bus.ts';
import { bounded } from './bounded.ts';
import { BusError } from './busError.ts';
import { SNAPSHOT_BUCKET } from './names.ts';
import { natsOf } from './natsBus.ts';
import { readObjectBytes } from './objectRead.ts';
import { payloadHash } from './payloadHash.ts';
import { sleep } from './sleep.ts';

/** The state after log sequence `seq`, its canonical hash and the state schema it was written with. */
export interface Snapshot<S = unknown> {
  schema: number;
  seq: number;
  hash: string;
  state: S;
}

/** What is stored about one snapshot, without its state. */
export interface SnapshotInfo {
  /** The object's name in the store (`snapshot-<slot>`). */
  name: string;
  schema: number;
  seq: number;
  hash: string;
  /** Bytes of the serialised state. */
  size: number;
  /** When it was saved (ISO time, from the saver's clock; informational). */
  savedAt: string;
}

/** A snapshot that `loadLatestSnapshot` passed over, and why. */
export interface SkippedSnapshot {
  name: string;
  seq: number;
  cause: BusError;
}

/** Options of `loadLatestSnapshot`. */
export interface LoadSnapshotOptions {
  /** Only snapshots of this state schema count; older ones are ignored (rebuild replays more). */
  schema: number;
  /** Check that the loaded state's canonical hash is the stored hash (default true). */
  verifyHash?: boolean;
  /** Milliseconds the whole load may take before it rejects with `SNAPSHOT_TIMEOUT` (default 30000). */
  timeoutMs?: number;
}

const PREFIX = 'snapshot-';
// chunks well under the server's 1 MiB max_payload, few enough that tens of MB stay quick
const CHUNK_BYTES = 512 * 1024;
const decoder = new TextDecoder();

/**
 * Saves a snapshot into object store `muster_snapshots`, chunked, overwriting the oldest of `keep`
 * slots (default 3); an interrupted save leaves the slot's previous snapshot in place. With the
 * writer's `cache` (CanonicalCache), only the state's changed leaves are serialised again.
 */
export async function saveSnapshot<S>(
  bus: Bus,
  snapshot: Snapshot<S>,
  opts: { keep?: number; cache?: CanonicalCache } = {},
): Promise<SnapshotInfo> {
  const keep = opts.keep ?? 3;
  if (!Number.isInteger(keep) || keep < 1) throw new RangeError(`keep must be a positive integer, got ${keep}`);
  const store = await openStore(bus);
  const existing = await listFrom(store);
  const used = new Map(existing.map((s) => [s.name, s]));
  const free = Array.from({ length: keep }, (_, i) => `${PREFIX}${i}`).find((name) => !used.has(name));
  const slot = free ?? existing.reduce((oldest, s) => (s.seq < oldest.seq ? s : oldest)).name;
  // canonical bytes: a reader checks the hash on the bytes as stored, before parsing them. They
  // are written a chunk at a time as the store asks for them (it awaits each chunk's ack), so a
  // state of many megabytes never holds the writer's event loop for long.
  const chunks = canonicalChunks(snapshot.state, opts.cache ?? new CanonicalCache(), CHUNK_BYTES);
  const data = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.next();
      if (next.done === true) controller.close();
      else controller.enqueue(next.value.slice());
    },
  });
  const info = await store.put(
    {
      name: slot,
      description: `muster state after log sequence ${snapshot.seq}`,
      options: { max_chunk_size: CHUNK_BYTES },
      metadata: {
        schema: String(snapshot.schema),
        seq: String(snapshot.seq),
        hash: snapshot.hash,
      },
    },
    data,
  );
  return { name: slot, schema: snapshot.schema, seq: snapshot.seq, hash: snapshot.hash, size: info.size, savedAt: info.mtime };
}

/**
 * The newest readable snapshot of the given schema, or null; a snapshot whose bytes or hash do not
 * check out is passed over for the next older one (and reported in `skipped`). Rejects with
 * `SNAPSHOT_TIMEOUT` after `timeoutMs`: the object store reads its chunks through a consumer, which
 * can stall without an error when a NATS node restarts, and a replica's start waited on one for
 * minutes; the caller tries again (the snapshot itself is not suspect).
 */
export async function loadLatestSnapshot<S = unknown>(
  bus: Bus,
  opts: LoadSnapshotOptions,
): Promise<{ snapshot: Snapshot<S> | null; skipped: SkippedSnapshot[] }> {
  return boundedRead(newestReadable<S>(bus, opts), opts.timeoutMs, 'loading the newest snapshot');
}

// `reading`, or a `SNAPSHOT_TIMEOUT` rejection after `timeoutMs` (default 30000) saying what took too long.
function boundedRead<T>(reading: Promise<T>, timeoutMs = 30_000, what: string): Promise<T> {
  return bounded(reading, timeoutMs, () => new BusError('SNAPSHOT_TIMEOUT', `${what} took longer than ${timeoutMs} ms`));
}

/** Listings of the store read before giving up on every snapshot it lists. */
const LISTINGS = 3;

/**
 * Newest first; when every snapshot listed fails to read, the store is listed again (up to
 * LISTINGS times, a second apart): a slot overwritten while it was read, or a NATS node whose copy
 * of the store is still filling, is gone a moment later, and giving up meant replaying the whole
 * log (a restarted standby of the hour soak replayed 75,265 transactions for it, 52 s).
 */
async function newestReadable<S>(bus: Bus, opts: LoadSnapshotOptions): Promise<{ snapshot: Snapshot<S> | null; skipped: SkippedSnapshot[] }> {
  const store = await openStore(bus);
  const skipped: SkippedSnapshot[] = [];
  for (let listing = 1; listing <= LISTINGS; listing++) {
    if (listing > 1) await sleep(1_000);
    const candidates = (await listFrom(store)).filter((s) => s.schema === opts.schema).sort((a, b) => b.seq - a.seq);
    if (candidates.length === 0) break;
    for (const info of candidates) {
      try {
        return { snapshot: await readSnapshot<S>(store, info, opts.verifyHash ?? true), skipped };
      } catch (err) {
        const cause = err instanceof BusError ? err : new BusError('SNAPSHOT_UNREADABLE', `snapshot ${info.name} could not be read`, { seq: info.seq, cause: err });
        skipped.push({ name: info.name, seq: info.seq, cause });
      }
    }
  }
  return { snapshot: null, skipped };
}

/**
 * One stored snapshot by name (as `listSnapshots` names it), with its state; throws
 * `SNAPSHOT_UNREADABLE` when it is gone or (with `verifyHash`, the default) does not hash to its
 * record, and `SNAPSHOT_TIMEOUT` when reading it took longer than `timeoutMs` (default 30000).
 */
export async function loadSnapshot<S = unknown>(bus: Bus, name: string, opts: { verifyHash?: boolean; timeoutMs?: number } = {}): Promise<Snapshot<S>> {
  return boundedRead((async () => {
    const store = await openStore(bus);
    const info = (await listFrom(store)).find((s) => s.name === name);
    if (info === undefined) throw new BusError('SNAPSHOT_UNREADABLE', `snapshot ${name} does not exist`);
    return readSnapshot<S>(store, info, opts.verifyHash ?? true);
  })(), opts.timeoutMs, `reading snapshot ${name}`);
}

/**
 * Checks that stored snapshot `name` hashes to its record, as `loadSnapshot` does, without keeping
 * its state: bytes stored as canonical JSON are hashed as they are and never parsed (an audit reads
 * every snapshot and needs only this). Throws as `loadSnapshot` does.
 */
export async function verifySnapshot(bus: Bus, name: string, opts: { timeoutMs?: number } = {}): Promise<void> {
  await boundedRead((async () => {
    const store = await openStore(bus);
    const info = (await listFrom(store)).find((s) => s.name === name);
    if (info === undefined) throw new BusError('SNAPSHOT_UNREADABLE', `snapshot ${name} does not exist`);
    const bytes = await storedBytes(store, info);
    if (payloadHash(bytes) !== info.hash) checkHash(info, JSON.parse(decoder.decode(bytes)), bytes);
  })(), opts.timeoutMs, `reading snapshot ${name}`);
}

/** Every stored snapshot, oldest log sequence first; `SNAPSHOT_TIMEOUT` when listing them took longer than `timeoutMs` (default 30000). */
export async function listSnapshots(bus: Bus, opts: { timeoutMs?: number } = {}): Promise<SnapshotInfo[]> {
  return boundedRead((async () => listFrom(await openStore(bus)))(), opts.timeoutMs, 'listing the snapshots');
}

function openStore(bus: Bus): Promise<ObjectStore> {
  // the object store checks a SHA-256 of every object; node:crypto does tens of MB several times faster
  setSha256Backend('native');
  return new Objm(natsOf(bus).js).open(SNAPSHOT_BUCKET);
}

async function listFrom(store: ObjectStore): Promise<SnapshotInfo[]> {
  const infos = (await store.list()).flatMap((info) => {
    const s = info.deleted ? null : toSnapshotInfo(info);
    return s === null ? [] : [s];
  });
  return infos.sort((a, b) => a.seq - b.seq);
}

async function readSnapshot<S>(store: ObjectStore, info: SnapshotInfo, verifyHash: boolean): Promise<Snapshot<S>> {
  const bytes = await storedBytes(store, info);
  const state = JSON.parse(decoder.decode(bytes)) as S;
  if (verifyHash) checkHash(info, state, bytes);
  return { schema: info.schema, seq: info.seq, hash: info.hash, state };
}

async function storedBytes(store: ObjectStore, info: SnapshotInfo): Promise<Uint8Array> {
  const bytes = await readObjectBytes(store, info.name);
  if (bytes === null) throw new BusError('SNAPSHOT_UNREADABLE', `snapshot ${info.name} vanished while loading`, { seq: info.seq });
  return bytes;
}

/** Throws `SNAPSHOT_UNREADABLE` unless a snapshot's state (stored as `bytes`) hashes to its record. */
function checkHash(info: SnapshotInfo, state: unknown, bytes: Uint8Array): void {
  // snapshots are stored as canonical JSON, so the stored bytes hash to the state hash; an older
  // one written in another form is checked by serialising its state again
  if (payloadHash(bytes) !== info.hash && payloadHash(canonicalBytes(state)) !== info.hash) {
    throw new BusError('SNAPSHOT_UNREADABLE', `snapshot ${info.name} at ${info.seq}: state does not hash to ${info.hash}`, { seq: info.seq });
  }
}

function toSnapshotInfo(info: ObjectInfo): SnapshotInfo | null {
  if (!info.name.startsWith(PREFIX)) return null;
  const meta = info.metadata ?? {};
  const schema = Number(meta['schema']);
  const seq = Number(meta['seq']);
  const hash = meta['hash'];
  if (!Number.isInteger(schema) || !Number.isInteger(seq) || typeof hash !== 'string') return null;
  return { name: info.name, schema, seq, hash, size: info.size, savedAt: info.mtime };
}
