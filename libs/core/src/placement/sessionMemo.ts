/**
 * A memo of values that hold for as long as the host index holding it (they depend only on its
 * hosts and their specs, which never change while it lives): what one session looked up is kept
 * for the next, the rest forgotten, so it stays the size of what sessions use.
 */
export class SessionMemo<V> {
  private current = new Map<string, V>();
  private before = new Map<string, V>();

  /** The value under `key`, made by `make` when neither this session nor the last one has it. */
  get(key: string, make: () => V): V {
    let value = this.current.get(key);
    if (value !== undefined) return value;
    value = this.before.get(key) ?? make();
    this.current.set(key, value);
    return value;
  }

  /** Starts a session: values the last one did not look up are forgotten. */
  nextSession(): void {
    this.before = this.current;
    this.current = new Map();
  }
}
