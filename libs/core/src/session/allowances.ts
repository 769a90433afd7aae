/**
 * What a reservation's plan leaves free at its start on each host it takes (CPU, memory, slots):
 * what jobs running past its start may still take there. Kept as one array of values by host
 * (the hosts in ascending order), so a plan kept across sessions is copied in one slice.
 */
export class Allowances {
  private constructor(
    private readonly hosts: Int32Array,
    private readonly values: Float64Array,
  ) {}

  /** The allowances on `hosts` (ascending), each host's CPU, memory and slots as `free` gives them. */
  static of(hosts: readonly number[], free: (h: number) => readonly [number, number, number]): Allowances {
    const values = new Float64Array(3 * hosts.length);
    hosts.forEach((h, i) => values.set(free(h), 3 * i));
    return new Allowances(Int32Array.from(hosts), values);
  }

  /** Whether taking (cpu, mem, slots) on host `h` goes past its allowance (false on a host it does not hold). */
  exceeded(h: number, cpu: number, mem: number, slots: number): boolean {
    const i = this.find(h);
    if (i < 0) return false;
    const v = this.values;
    return cpu > v[3 * i]! || mem > v[3 * i + 1]! || slots > v[3 * i + 2]!;
  }

  /** Spends (cpu, mem, slots) of host `h`'s allowance (nothing on a host it does not hold). */
  spend(h: number, cpu: number, mem: number, slots: number): void {
    const i = this.find(h);
    if (i < 0) return;
    const v = this.values;
    v[3 * i] = v[3 * i]! - cpu;
    v[3 * i + 1] = v[3 * i + 1]! - mem;
    v[3 * i + 2] = v[3 * i + 2]! - slots;
  }

  /** A copy whose spending leaves this one as it is. */
  copy(): Allowances {
    return new Allowances(this.hosts, this.values.slice());
  }

  // the position of host `h` (binary search), or -1
  private find(h: number): number {
    let lo = 0;
    let hi = this.hosts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = this.hosts[mid]!;
      if (at < h) lo = mid + 1;
      else if (at > h) hi = mid - 1;
      else return mid;
    }
    return -1;
  }
}
