// What the network faults need of this machine (root, iptables, a cgroup v2 hierarchy), checked
// before the drill starts: the cluster and the fault schedule ask, without the faults themselves.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** The cgroup v2 hierarchy: beside v1 controllers (hybrid), or on its own (null: none). */
export const CGROUP2 = existsSync('/sys/fs/cgroup/unified/cgroup.procs') ? '/sys/fs/cgroup/unified' : existsSync('/sys/fs/cgroup/cgroup.controllers') ? '/sys/fs/cgroup' : null;
/** Runs iptables, waiting for its lock. */
export const iptables = (args: string[]): void => {
  execFileSync('iptables', ['-w', ...args], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 });
};

/** Why this machine cannot cut a replica off the network (not root, no cgroup v2, no iptables), or null when it can. */
export function partitionUnavailable(): string | null {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'needs root (iptables and a cgroup of its own)';
  if (CGROUP2 === null) return 'needs a cgroup v2 hierarchy';
  return iptablesMissing();
}

/** Why this machine cannot slow the replicas' network (not root, no iptables), or null when it can. */
export function slowNetworkUnavailable(): string | null {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'needs root (iptables drops the lost packets)';
  return iptablesMissing();
}

// whether iptables runs here (listing OUTPUT), the reason when it does not
function iptablesMissing(): string | null {
  try {
    iptables(['-L', 'OUTPUT', '-n']);
  } catch {
    return 'needs iptables (apt-get install -y iptables)';
  }
  return null;
}
