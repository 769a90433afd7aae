/** One line a member printed, as `logs()` gives it (DESIGN.md §15). */
export interface OutputLine {
  jobId: string;
  /** The node it ran on. */
  node: string;
  member: number;
  /** The gang's attempt it belongs to (0, then 1, 2, … after restarts). */
  attempt: number;
  stream: 'stdout' | 'stderr';
  line: string;
  /** The MUSTER_OUTPUT sequence of the batch it came in (`logs({fromSeq})` resumes there). */
  seq: number;
}

const decoder = new TextDecoder();

/** The lines of one MUSTER_OUTPUT message (sequence `seq`) on `muster.out.<node>.<job>.<member>`; none when it is not an output batch. */
export function outputLines(seq: number, subject: string, data: Uint8Array): OutputLine[] {
  const [, , node, jobId, member] = subject.split('.');
  if (node === undefined || jobId === undefined || member === undefined || !/^\d+$/.test(member)) return [];
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(data));
  } catch {
    return [];
  }
  if (typeof value !== 'object' || value === null) return [];
  const b = value as { attempt?: unknown; stream?: unknown; lines?: unknown };
  if (!Number.isInteger(b.attempt) || (b.stream !== 'stdout' && b.stream !== 'stderr') || !Array.isArray(b.lines)) return [];
  const base = { jobId, node, member: Number(member), attempt: b.attempt as number, stream: b.stream as OutputLine['stream'], seq };
  return b.lines.filter((l): l is string => typeof l === 'string').map((line) => ({ ...base, line }));
}
