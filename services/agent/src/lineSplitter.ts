/**
 * Cuts a byte stream into text lines: a line ends at `\n` (a `\r` before it goes too); a line longer
 * than `maxLineChars` is cut there, so a program that never prints a newline cannot grow it without end.
 */
export class LineSplitter {
  private readonly decoder = new TextDecoder();
  private partial = '';

  constructor(private readonly maxLineChars: number) {}

  /** The complete lines in `chunk` (with what came before it). */
  push(chunk: Uint8Array): string[] {
    const text = this.partial + this.decoder.decode(chunk, { stream: true });
    const parts = text.split('\n');
    this.partial = parts.pop() ?? '';
    const lines = parts.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
    while (this.partial.length > this.maxLineChars) {
      lines.push(this.partial.slice(0, this.maxLineChars));
      this.partial = this.partial.slice(this.maxLineChars);
    }
    return lines;
  }

  /** What is left after the last newline, as a last line (none when nothing is left). */
  end(): string[] {
    const rest = this.partial + this.decoder.decode();
    this.partial = '';
    return rest === '' ? [] : [rest];
  }
}
