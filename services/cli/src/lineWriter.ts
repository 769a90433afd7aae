/** Characters of lines gathered before they are written together. */
const CHUNK_CHARS = 1 << 16;

/** Lines written in chunks of about 64 KiB (one write a chunk, not one a line), each ended by a newline; `flush` writes the rest. */
export class LineWriter {
  private lines: string[] = [];
  private chars = 0;

  constructor(private readonly write: (text: string) => void) {}

  /** Adds one line (without its newline). */
  line(line: string): void {
    this.lines.push(line);
    this.chars += line.length + 1;
    if (this.chars >= CHUNK_CHARS) this.flush();
  }

  /** Writes the lines gathered so far. */
  flush(): void {
    if (this.lines.length === 0) return;
    this.write(`${this.lines.join('\n')}\n`);
    this.lines = [];
    this.chars = 0;
  }
}
