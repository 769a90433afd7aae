import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { ByteScratch, ByteWriter } from './byteWriter.ts';

/**
 * Canonical JSON: object keys sorted by UTF-16 code unit order, no insignificant whitespace,
 * `undefined` members dropped, arrays kept in order. Numbers use JavaScript's shortest form.
 * This is the serialisation that state hashes and transaction hashes are taken of; it is part of
 * the contract (see docs/canonical-json.md), so do not change it without a new version.
 */
export function canonicalJson(value: unknown): string {
  return DECODER.decode(written(value));
}

/**
 * The UTF-8 bytes of `canonicalJson(value)`, written directly (what hashes and log payloads take);
 * with a cache, from its chunks; without one, written in `scratch` when given (a caller that writes
 * often keeps one), else in a buffer of its own.
 */
export function canonicalBytes(value: unknown, cache?: CanonicalCache, scratch?: ByteScratch): Uint8Array {
  if (cache === undefined) return written(value, scratch).slice();
  const parts = [...canonicalChunks(value, cache)].map((chunk) => chunk.slice());
  const bytes = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.length;
  }
  return bytes;
}

/**
 * Canonical bytes of the frozen trie leaves of states (shard.ts), kept between writes: a state
 * shares every leaf it did not change with the state before it, so hashing a state at each
 * checkpoint writes only what changed since the last one. Holds about one state's bytes.
 */
export class CanonicalCache {
  /** Bytes by leaf; a leaf is frozen, so its bytes never change. */
  readonly leaves = new WeakMap<object, Uint8Array>();
  /** The buffer and encoded keys the cache's writes reuse. */
  readonly scratch = new ByteScratch();
}

/** Where a state's trie leaves sit: state → table → level → level → leaf. */
const LEAF_DEPTH = 4;

/** `value` written into `scratch`'s buffer (default: one of its own): a view, valid until the next write into it. */
function written(value: unknown, scratch?: ByteScratch): Uint8Array {
  const out = new ByteWriter(scratch);
  write(value, out, 0);
  return out.view();
}

/**
 * The canonical bytes of a value (`canonicalBytes(value, cache)`) in chunks of about `chunkBytes`,
 * each valid until the next is asked for, so that a caller can hash a state of many megabytes a
 * slice at a time between other work. Given a cache, leaves are taken from (or put into) it as by
 * `canonicalBytes`; given a scratch buffer, they are written into it and not kept (a one-off hash
 * that holds a chunk at a time, not the state's bytes). The value must not change while its
 * chunks are read: a state never does.
 */
export function* canonicalChunks(value: unknown, cache: CanonicalCache | ByteScratch, chunkBytes = 1 << 18): Generator<Uint8Array, void, undefined> {
  const out = new ChunkBuffer(chunkBytes);
  yield* chunksOf(value, cache, 0, out);
  if (out.length > 0) yield out.take();
}

/** Bytes gathered for the next chunk, in a buffer of its own (the scratch buffer is reused between slices). */
class ChunkBuffer {
  private buf: Uint8Array;
  length = 0;

  constructor(readonly limit: number) {
    this.buf = new Uint8Array(limit);
  }

  get full(): boolean {
    return this.length >= this.limit;
  }

  push(bytes: Uint8Array): void {
    if (this.length + bytes.length > this.buf.length) {
      const grown = new Uint8Array(Math.max(this.buf.length * 2, this.length + bytes.length));
      grown.set(this.buf.subarray(0, this.length));
      this.buf = grown;
    }
    this.buf.set(bytes, this.length);
    this.length += bytes.length;
  }

  byte(b: number): void {
    this.push(BYTES[b]!);
  }

  /** The gathered bytes (a view, valid until the next push) and a fresh start. */
  take(): Uint8Array {
    const chunk = this.buf.subarray(0, this.length);
    this.length = 0;
    return chunk;
  }
}

const BYTES: Uint8Array[] = Array.from({ length: 128 }, (_, b) => Uint8Array.of(b));

// The traversal of `write` down to a state's leaves (taken from or put into a cache when frozen),
// pushing into a chunk buffer and yielding whenever it is full.
function* chunksOf(value: unknown, cache: CanonicalCache | ByteScratch, depth: number, out: ChunkBuffer): Generator<Uint8Array, void, undefined> {
  const scratch = cache instanceof CanonicalCache ? cache.scratch : cache;
  if (typeof value !== 'object' || value === null || depth === LEAF_DEPTH) {
    out.push(depth === LEAF_DEPTH && Array.isArray(value) && Object.isFrozen(value) && cache instanceof CanonicalCache ? leafBytes(value, cache) : written(value, scratch));
  } else if (Array.isArray(value)) {
    out.byte(0x5b);
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.byte(0x2c);
      yield* chunksOf(value[i], cache, depth + 1, out);
    }
    out.byte(0x5d);
  } else {
    const record = value as Record<string, unknown>;
    out.byte(0x7b);
    let first = true;
    for (const key of Object.keys(record).sort()) {
      const member = record[key];
      if (member === undefined) continue;
      if (!first) out.byte(0x2c);
      first = false;
      out.push(written(key, scratch));
      out.byte(0x3a);
      yield* chunksOf(member, cache, depth + 1, out);
    }
    out.byte(0x7d);
  }
  if (out.full) yield out.take();
}

/** The bytes of a frozen leaf, from the cache or written into it. */
function leafBytes(leaf: readonly unknown[], cache: CanonicalCache): Uint8Array {
  let bytes = cache.leaves.get(leaf);
  if (bytes === undefined) {
    bytes = written(leaf, cache.scratch).slice();
    cache.leaves.set(leaf, bytes);
  }
  return bytes;
}

const DECODER = new TextDecoder();

// Written straight into UTF-8 bytes: no intermediate strings, so a 50 MB state serialises at a few
// times the speed of building the text (garbage collection was most of the cost). Every byte is
// what `JSON.stringify` and a sort of the keys would give; canonical.test.ts checks it against
// that reference writer on generated values.

function write(value: unknown, out: ByteWriter, depth: number): void {
  switch (typeof value) {
    case 'string':
      out.quoted(value);
      return;
    case 'number':
      out.number(value);
      return;
    case 'boolean':
      out.ascii(value ? 'true' : 'false');
      return;
    case 'object':
      if (value === null) out.ascii('null');
      else if (Array.isArray(value)) writeArray(value, out, depth);
      else writeRecord(value as Record<string, unknown>, out, depth);
      return;
    case 'bigint':
      out.ascii(JSON.stringify(value));
      return;
    default:
      out.ascii('null');
  }
}

function writeArray(items: readonly unknown[], out: ByteWriter, depth: number): void {
  out.byte(0x5b);
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out.byte(0x2c);
    write(items[i], out, depth + 1);
  }
  out.byte(0x5d);
}

// records with more keys than this are sorted by Array.prototype.sort, smaller ones as they are read
const INSERTION_SORT_MAX = 16;

function writeRecord(record: Record<string, unknown>, out: ByteWriter, depth: number): void {
  // the keys go into the writer's list for this depth, sorted as they come: no array per record
  // (Object.keys and a sort of it were a third of the time to write an event). JSON-only data has
  // no enumerable inherited members, so for-in reads exactly Object.keys' keys.
  const keys = (out.keyLists[depth] ??= []);
  let n = 0;
  let sorted = true;
  for (const key in record) {
    if (n < INSERTION_SORT_MAX) {
      let j = n;
      while (j > 0 && (keys[j - 1] as string) > key) {
        keys[j] = keys[j - 1] as string;
        j--;
      }
      keys[j] = key;
    } else {
      if (sorted && (keys[n - 1] as string) > key) sorted = false;
      keys[n] = key;
    }
    n++;
  }
  let order: readonly string[] = keys;
  if (!sorted) {
    // a large record out of order: sort a copy (the list is reused by the records inside it)
    const copy = keys.slice(0, n);
    copy.sort();
    order = copy;
  }
  out.byte(0x7b);
  let first = true;
  for (let i = 0; i < n; i++) {
    const key = order[i] as string;
    const member = record[key];
    if (member === undefined) continue;
    if (!first) out.byte(0x2c);
    first = false;
    out.key(key);
    write(member, out, depth + 1);
  }
  out.byte(0x7d);
}

/** Hex SHA-256 of a string's UTF-8 bytes. */
export function sha256Hex(text: string): string {
  return bytesToHex(sha256(utf8ToBytes(text)));
}

/** Hex SHA-256 of the canonical JSON of a value; with a cache, of its chunks. */
export function canonicalHash(value: unknown, cache?: CanonicalCache): string {
  if (cache === undefined) return canonicalDigest(value, (bytes) => bytesToHex(sha256(bytes)));
  const hash = sha256.create();
  for (const chunk of canonicalChunks(value, cache)) hash.update(chunk);
  return bytesToHex(hash.digest());
}

/** A buffer to write into and a SHA-256 to take (a turn context is one): what hashes many small values cheaply. */
export interface CanonicalHasher {
  readonly scratch: ByteScratch;
  /** Hex SHA-256 of bytes (a view, valid only during the call). */
  digest(bytes: Uint8Array): string;
}

/** `canonicalHash(value)`, written into the hasher's scratch and hashed by its digest when one is given. */
export function canonicalHashWith(value: unknown, hasher?: CanonicalHasher): string {
  if (hasher === undefined) return canonicalHash(value);
  return canonicalDigest(value, (bytes) => hasher.digest(bytes), hasher.scratch);
}

/** `digest` of the canonical bytes of a value, given a view of them (valid only during the call), written into `scratch` when given. */
export function canonicalDigest<T>(value: unknown, digest: (bytes: Uint8Array) => T, scratch?: ByteScratch): T {
  return digest(written(value, scratch));
}
