import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DECISIONS_STREAM,
  IN_STREAM,
  LOG_STREAM,
  ensureStreams,
  isBusError,
  parseStreamDefinition,
  publishInput,
  streamDefinitions,
  streamInfo,
} from '@muster/bus';
import type { StreamDefinition } from '@muster/bus';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';

let bus: TestBus;
beforeEach(async () => {
  bus = await startTestBus({ ensure: false });
});
afterEach(async () => {
  await bus.stop();
});

function withConfig(name: string, change: Record<string, unknown>): StreamDefinition[] {
  return streamDefinitions.map((d) => (d.config.name === name ? { ...d, config: { ...d.config, ...change } } : d));
}

describe('ensureStreams', () => {
  it('creates every stream once, then finds them unchanged; the server honours every setting', async () => {
    const first = await ensureStreams(bus.bus, { replicas: 1 });
    expect(first.map((r) => [r.name, r.kind, r.action])).toEqual([
      ['MUSTER_IN', 'stream', 'created'],
      ['MUSTER_LOG', 'stream', 'created'],
      ['MUSTER_DECISIONS', 'stream', 'created'],
      ['MUSTER_OUTPUT', 'stream', 'created'],
      ['KV_muster_leader', 'kv', 'created'],
      ['OBJ_muster_snapshots', 'objectStore', 'created'],
    ]);
    // a field nats-server 2.9.10 did not know would be listed here: it would silently not apply
    expect(first.flatMap((r) => r.ignoredFields)).toEqual([]);
    const second = await ensureStreams(bus.bus, { replicas: 1 });
    expect(second.map((r) => r.action)).toEqual(['unchanged', 'unchanged', 'unchanged', 'unchanged', 'unchanged', 'unchanged']);
    const log = await bus.admin.streamInfo(LOG_STREAM);
    expect(log.config).toMatchObject({ subjects: ['muster.log.>'], storage: 'file', num_replicas: 1, max_msg_size: 1048576, deny_delete: true, deny_purge: true });
  });

  it('updates a changed setting in place and keeps the stored messages', async () => {
    await ensureStreams(bus.bus, { replicas: 1 });
    for (let i = 0; i < 3; i++) await publishInput(bus.bus, 'muster.in.cancel', { jobId: `j${i}` }, `cancel-${i}`);
    const changed = withConfig(IN_STREAM, { max_msg_size: 512 * 1024, duplicate_window: 60_000_000_000 });
    const result = await ensureStreams(bus.bus, { replicas: 1, definitions: changed });
    expect(result.filter((r) => r.action !== 'unchanged').map((r) => [r.name, r.action])).toEqual([[IN_STREAM, 'updated']]);
    const info = await bus.admin.streamInfo(IN_STREAM);
    expect(info.config.max_msg_size).toBe(512 * 1024);
    expect(info.config.duplicate_window).toBe(60_000_000_000);
    expect(info.state.messages).toBe(3);
    expect((await ensureStreams(bus.bus, { replicas: 1, definitions: changed })).map((r) => r.action)).not.toContain('updated');
  });

  it('refuses an update that would drop stored messages, and changes nothing', async () => {
    await ensureStreams(bus.bus, { replicas: 1 });
    for (let i = 0; i < 3; i++) await publishInput(bus.bus, 'muster.in.cancel', { jobId: `j${i}` }, `cancel-${i}`);
    const err = await ensureStreams(bus.bus, { replicas: 1, definitions: withConfig(IN_STREAM, { max_msgs: 1 }) }).catch((e: unknown) => e);
    expect(isBusError(err, 'UNSAFE_STREAM_UPDATE')).toBe(true);
    const info = await bus.admin.streamInfo(IN_STREAM);
    expect(info.config.max_msgs).toBe(-1);
    expect(info.state.messages).toBe(3);
  });

  it('deduplicates inputs and decisions by msg id and refuses message deletes on the log', async () => {
    await ensureStreams(bus.bus, { replicas: 1 });
    const a = await publishInput(bus.bus, 'muster.in.submit', { id: 'j1' }, 'j1:abc');
    const b = await publishInput(bus.bus, 'muster.in.submit', { id: 'j1' }, 'j1:abc');
    expect(b).toMatchObject({ duplicate: true, seq: a.seq });
    const d1 = await bus.admin.publish('muster.decision.j1', '{}', { msgId: 'muster:1:0' });
    const d2 = await bus.admin.publish('muster.decision.j1', '{}', { msgId: 'muster:1:0' });
    expect(d2).toMatchObject({ stream: DECISIONS_STREAM, duplicate: true, seq: d1.seq });
    await bus.admin.publish('muster.log.tx', '{}');
    await expect(bus.admin.deleteMessage(LOG_STREAM, 1)).rejects.toThrow();
    await expect(bus.admin.purge(LOG_STREAM)).rejects.toThrow();
    expect((await streamInfo(bus.bus, LOG_STREAM)).messages).toBe(1);
  });

  it('rejects a definition that fixes its replicas or lacks subjects', () => {
    const log = streamDefinitions.find((d) => d.config.name === LOG_STREAM);
    expect(() => parseStreamDefinition({ ...log, config: { ...log?.config, num_replicas: 3 } })).toThrow(/num_replicas/);
    expect(() => parseStreamDefinition({ kind: 'stream', config: { name: 'X' } })).toThrow(/subjects/);
    expect(() => parseStreamDefinition({ kind: 'kv', config: { name: 'X', subjects: [] } })).toThrow(/bucket/);
  });
});
