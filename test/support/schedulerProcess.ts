// Scheduler replicas as real processes for tests that kill -9 or SIGSTOP them (libs/stack), and
// small helpers to ask them where they are.
import { subjects } from '@muster/bus';
import type { Bus } from '@muster/bus';
import type { ReplicaStatus } from '@muster/core';

export { spawnScheduler } from '@muster/stack';
export type { SchedulerProcess, SchedulerProcessOptions } from '@muster/stack';

/** Asks one replica where it is; null when it does not answer in time. */
export async function replicaStatus(bus: Bus, id: string, timeoutMs = 1000): Promise<ReplicaStatus | null> {
  try {
    const reply = await bus.request(subjects.replicaStatus(id), '', { timeoutMs });
    return JSON.parse(reply.text()) as ReplicaStatus;
  } catch {
    return null;
  }
}

/** Polls until `check` returns a value (not null/false) or the time runs out; a throw counts as not yet. */
export async function eventually<T>(check: () => Promise<T | null | false> | T | null | false, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = null;
  for (;;) {
    try {
      const value = await check();
      if (value !== null && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError === null ? '' : `: ${String(lastError)}`}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
