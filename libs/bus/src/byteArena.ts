// Bytes of many small messages in a few large buffers: a message's bytes are a view into the
// buffer current when they were written, and a full buffer is left to its views (never reused),
// so no view ever changes. A typed array larger than 64 bytes costs an allocation off V8's heap
// (and its tracking by the collector); a round of decisions wrote two of them per message.

const ENCODER = new TextEncoder();

/** Append-only bytes in buffers of about `chunkBytes`; `take` hands out what was written since the last take. */
export class ByteArena {
  private buf: Uint8Array;
  private start = 0;
  private pos = 0;

  constructor(private readonly chunkBytes = 1 << 16) {
    this.buf = new Uint8Array(chunkBytes);
  }

  /** Room for `n` more bytes of the piece being written (moved to a new buffer if needed). */
  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const piece = this.buf.subarray(this.start, this.pos);
    this.buf = new Uint8Array(Math.max(this.chunkBytes, (piece.length + n) * 2));
    this.buf.set(piece);
    this.start = 0;
    this.pos = piece.length;
  }

  /** Appends bytes. */
  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** Appends a string's UTF-8 bytes. */
  text(s: string): void {
    this.room(s.length);
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        this.pos = pos;
        this.room((s.length - i) * 3);
        this.pos += ENCODER.encodeInto(s.slice(i), this.buf.subarray(this.pos)).written;
        return;
      }
      buf[pos++] = c;
    }
    this.pos = pos;
  }

  /** The bytes appended since the last take (a view that stays valid). */
  take(): Uint8Array {
    const piece = this.buf.subarray(this.start, this.pos);
    this.start = this.pos;
    return piece;
  }
}
