// What the drill's takeover tests ask of a running replica, and how they wait for it.
import { subjects } from '@muster/bus';
import type { Bus } from '@muster/bus';

/** The role a replica reports on its status subject ("leader", "standby", ...), or null when it does not answer within a second. */
export async function roleOf(bus: Bus, id: string): Promise<string | null> {
  try {
    const reply = await bus.request(subjects.replicaStatus(id), '', { timeoutMs: 1_000 });
    return (JSON.parse(reply.text()) as { role: string }).role;
  } catch {
    return null;
  }
}

/** Whether `check` holds within `ms`, looked at every `step` ms. */
export async function until(check: () => Promise<boolean> | boolean, ms: number, step = 100): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, step));
  }
  return false;
}
