/** An amount of node resources: cpu in millicores, memory in MiB, slots (members) and GPU devices. */
export interface Resources {
  cpu: number;
  memoryMb: number;
  slots: number;
  gpus: number;
}

/** The zero amount. */
export function zeroResources(): Resources {
  return { cpu: 0, memoryMb: 0, slots: 0, gpus: 0 };
}

/** Adds `amount` into `target` in place (times `factor`, which may be negative). */
export function addResources(target: Resources, amount: Resources, factor = 1): void {
  target.cpu += amount.cpu * factor;
  target.memoryMb += amount.memoryMb * factor;
  target.slots += amount.slots * factor;
  target.gpus += amount.gpus * factor;
}

/** `amount` times `n`, as a new value. */
export function scaleResources(amount: Resources, n: number): Resources {
  return { cpu: amount.cpu * n, memoryMb: amount.memoryMb * n, slots: amount.slots * n, gpus: amount.gpus * n };
}

/** Whether every field is zero. */
export function isZeroResources(r: Resources): boolean {
  return r.cpu === 0 && r.memoryMb === 0 && r.slots === 0 && r.gpus === 0;
}
