/** Keys kept encoded (`"key":`) between writes, at most; field names repeat, ids mostly do not. */
const KEY_CACHE_LIMIT = 4096;
const ENCODER = new TextEncoder();

/**
 * A buffer and encoded keys that writers reuse, owned by whoever writes often (a turn context, a
 * canonical cache): allocating a typed array costs about a microsecond, which is most of the time
 * to write a small value. The buffer grows as needed and is kept. One writer at a time uses it
 * (writing a value never writes another).
 */
export class ByteScratch {
  /** The buffer the next writer writes into. */
  buf = new Uint8Array(1 << 12);
  /** Object keys with their colon, encoded. */
  readonly keys = new Map<string, Uint8Array>();
  /** A record's keys at each depth of the value being written, sorted there (reused: no array per record). */
  readonly keyLists: string[][] = [];
}

// a writer without a scratch of its own writes one small value (a fingerprint, a msg id's hash):
// a buffer that small is allocated on V8's heap (a large one is not, at several times the cost),
// and encoding each key as it comes is cheaper than filling a cache used once
const OWN_BUFFER_BYTES = 256;

/**
 * A UTF-8 buffer for canonical JSON: ASCII written byte by byte, anything else (or a string that
 * needs escapes) through `JSON.stringify` and `TextEncoder`, so the escapes are exactly JSON's.
 * Start a new writer for each value; its bytes are valid until the next writer starts.
 */
export class ByteWriter {
  private buf: Uint8Array;
  private pos = 0;
  private readonly keyCache: Map<string, Uint8Array> | null;
  /** A record's keys at each depth (see `ByteScratch.keyLists`). */
  readonly keyLists: string[][];

  /** A writer into `scratch`'s buffer (default: a small buffer of its own, grown as needed). */
  constructor(private readonly scratch?: ByteScratch) {
    this.buf = scratch?.buf ?? new Uint8Array(OWN_BUFFER_BYTES);
    this.keyCache = scratch?.keys ?? null;
    this.keyLists = scratch?.keyLists ?? [];
  }

  /** The bytes written so far: a view of the scratch buffer, valid until the next writer writes into it. */
  view(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }

  /** Bytes written before (a cached piece). */
  raw(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** One byte. */
  byte(b: number): void {
    if (this.pos === this.buf.length) this.grow(1);
    this.buf[this.pos++] = b;
  }

  /** A string known to be ASCII without anything to escape (literals, numbers). */
  ascii(text: string): void {
    this.room(text.length);
    for (let i = 0; i < text.length; i++) this.buf[this.pos++] = text.charCodeAt(i);
  }

  /** A number as `JSON.stringify` writes it (non-finite as null). */
  number(n: number): void {
    // integers (sequences, times, counts: most numbers written) digit by digit, without a string;
    // below 1e15 JSON writes every integer in plain digits, and -0 as 0
    if (Number.isInteger(n) && n < 1e15 && n > -1e15) this.integer(n);
    else this.ascii(Number.isFinite(n) ? String(n) : 'null');
  }

  private integer(n: number): void {
    this.room(17);
    const buf = this.buf;
    let pos = this.pos;
    if (n < 0) {
      buf[pos++] = 0x2d;
      n = -n;
    }
    let digits = 1;
    for (let m = n; m >= 10; m = Math.floor(m / 10)) digits++;
    let at = pos + digits;
    this.pos = at;
    while (n >= 10) {
      const q = Math.floor(n / 10);
      buf[--at] = 0x30 + (n - q * 10);
      n = q;
    }
    buf[--at] = 0x30 + n;
  }

  /** A JSON string literal with JSON.stringify's escapes. */
  quoted(text: string): void {
    this.room(text.length + 2);
    const start = this.pos;
    const buf = this.buf;
    let pos = start;
    buf[pos++] = 0x22;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x20 || c === 0x22 || c === 0x5c || c >= 0x80) {
        this.pos = start;
        this.encoded(JSON.stringify(text));
        return;
      }
      buf[pos++] = c;
    }
    buf[pos++] = 0x22;
    this.pos = pos;
  }

  /** An object key with its colon, from the scratch's cache of encoded keys (if any). */
  key(key: string): void {
    const keyCache = this.keyCache;
    if (keyCache === null) {
      this.quoted(key);
      this.byte(0x3a);
      return;
    }
    let bytes = keyCache.get(key);
    if (bytes === undefined) {
      const start = this.pos;
      this.quoted(key);
      this.byte(0x3a);
      bytes = this.buf.slice(start, this.pos);
      if (keyCache.size >= KEY_CACHE_LIMIT) keyCache.clear();
      keyCache.set(key, bytes);
      return;
    }
    // a key is a few bytes: a loop is cheaper than a typed-array set
    this.room(bytes.length);
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < bytes.length; i++) buf[pos++] = bytes[i]!;
    this.pos = pos;
  }

  private encoded(text: string): void {
    this.room(text.length * 3);
    this.pos += ENCODER.encodeInto(text, this.buf.subarray(this.pos)).written;
  }

  private room(n: number): void {
    if (this.pos + n > this.buf.length) this.grow(n);
  }

  private grow(n: number): void {
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    if (this.scratch !== undefined) this.scratch.buf = next;
  }
}
