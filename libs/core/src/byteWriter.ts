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
}

/**
 * A UTF-8 buffer for canonical JSON: ASCII written byte by byte, anything else (or a string that
 * needs escapes) through `JSON.stringify` and `TextEncoder`, so the escapes are exactly JSON's.
 * Start a new writer for each value; its bytes are valid until the next writer starts.
 */
export class ByteWriter {
  private buf: Uint8Array;
  private pos = 0;

  /** A writer into `scratch`'s buffer (default: a buffer of its own). */
  constructor(private readonly scratch: ByteScratch = new ByteScratch()) {
    this.buf = scratch.buf;
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
    this.ascii(Number.isFinite(n) ? String(n) : 'null');
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

  /** An object key with its colon, from a small cache of encoded keys. */
  key(key: string): void {
    const keyCache = this.scratch.keys;
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
    this.raw(bytes);
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
    this.scratch.buf = next;
  }
}
