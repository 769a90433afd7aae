import { networkInterfaces } from 'node:os';

/** The address an agent registers its node at by default (DESIGN.md §15): the host's first non-loopback IPv4, else `127.0.0.1`. */
export function hostAddress(interfaces: ReturnType<typeof networkInterfaces> = networkInterfaces()): string {
  for (const name of Object.keys(interfaces).sort()) {
    for (const info of interfaces[name] ?? []) {
      if (info.family === 'IPv4' && !info.internal) return info.address;
    }
  }
  return '127.0.0.1';
}
