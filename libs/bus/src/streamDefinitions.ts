import { readFileSync } from 'node:fs';
import { BusError } from './busError.ts';

// streams/ is data outside this package: read at load, three folders up from src/ (the sources) and
// from dist/ (the build) alike, so the compiled package needs no copy of it
const definitionFile = (name: string): unknown => JSON.parse(readFileSync(new URL(`../../../streams/${name}.json`, import.meta.url), 'utf8'));

/** What a definition creates: a plain stream, or the stream behind a KV bucket or an object store. */
export type StreamDefinitionKind = 'stream' | 'kv' | 'objectStore';

/** One stream, bucket or object store as data (streams/*.json); replicas are chosen when applied. */
export interface StreamDefinition {
  kind: StreamDefinitionKind;
  /** The bucket name, for `kv` and `objectStore`. */
  bucket?: string;
  /** The server's stream configuration (JetStream's field names), without `num_replicas`. */
  config: StreamSettings;
}

/** A stream's configuration as the JetStream API spells it (`max_age`, `duplicate_window`, …). */
export interface StreamSettings {
  name: string;
  subjects: string[];
  [setting: string]: unknown;
}

/** Checks that a parsed JSON value is a stream definition and returns it typed. */
export function parseStreamDefinition(value: unknown): StreamDefinition {
  const fail = (why: string): never => {
    throw new BusError('BAD_DEFINITION', `invalid stream definition: ${why}`);
  };
  if (typeof value !== 'object' || value === null) return fail('not an object');
  const def = value as { kind?: unknown; bucket?: unknown; config?: unknown };
  if (def.kind !== 'stream' && def.kind !== 'kv' && def.kind !== 'objectStore') return fail('kind');
  if (def.kind !== 'stream' && typeof def.bucket !== 'string') return fail('bucket');
  if (typeof def.config !== 'object' || def.config === null) return fail('config');
  const config = def.config as { name?: unknown; subjects?: unknown; num_replicas?: unknown };
  if (typeof config.name !== 'string' || config.name === '') return fail('config.name');
  if (!Array.isArray(config.subjects) || !config.subjects.every((s) => typeof s === 'string')) {
    return fail(`${config.name}: config.subjects`);
  }
  // replicas depend on the deployment (1 on one server, 3 on a cluster), never on the file
  if (config.num_replicas !== undefined) return fail(`${config.name}: num_replicas is chosen at apply time`);
  return value as StreamDefinition;
}

/** The definitions in streams/*.json: MUSTER_IN, MUSTER_LOG, MUSTER_DECISIONS, MUSTER_OUTPUT, KV muster_leader, object store muster_snapshots. */
export const streamDefinitions: readonly StreamDefinition[] = ['muster_in', 'muster_log', 'muster_decisions', 'muster_output', 'muster_leader', 'muster_snapshots']
  .map(definitionFile)
  .map(parseStreamDefinition);
