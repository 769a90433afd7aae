import { describe, expect, it } from 'vitest';
import { within } from '@muster/stack';

describe('within', () => {
  it('given a promise that rejects in time, when awaited, then the rejection reaches the caller', async () => {
    // before: the caller got null only after the bound, and the rejection was unhandled (it ended the drill)
    const started = Date.now();
    await expect(within(Promise.reject(new Error('request timed out')), 5_000)).rejects.toThrow('request timed out');
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('given a promise that rejects after the bound, when awaited, then the caller gets null and nothing is left unhandled', async () => {
    const late = new Promise<string>((_, reject) => setTimeout(() => reject(new Error('late')), 30));
    await expect(within(late, 5)).resolves.toBeNull();
    // vitest fails the run on an unhandled rejection: give the late one time to happen
    await new Promise((resolve) => setTimeout(resolve, 60));
  });

  it('given a promise that resolves in time, when awaited, then the caller gets its value', async () => {
    await expect(within(Promise.resolve(7), 1_000)).resolves.toBe(7);
  });
});
