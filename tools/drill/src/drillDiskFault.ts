import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, statfsSync } from 'node:fs';
import type { FaultContext, FaultRecord } from './drillFaults.ts';
import { sleep } from './drillSleep.ts';
import { pickNatsNode, restartNatsNode } from './drillTargets.ts';

const run = (cmd: string, args: string[]): string => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });

/** Why this machine cannot fill a NATS node's disk (not root, or no mount), or null when it can. */
export function diskFaultUnavailable(): string | null {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'needs root (it mounts a tmpfs under a NATS node\'s store)';
  if (!existsSync('/usr/bin/mount') && !existsSync('/bin/mount')) return 'needs mount(8) (util-linux)';
  return null;
}

/**
 * A full disk on one NATS node: the node is stopped, its JetStream store moved onto a tmpfs only a
 * little larger than the store (the drill's own mount, under the drill's folder), and the node
 * restarted; then a filler file takes every free byte for `diskFullMs` while the workload goes
 * on, so that node's stream replicas cannot write; then the filler goes, the node is stopped, its
 * store copied back to disk and the tmpfs unmounted, and the node restarted on it. The other two
 * nodes keep the R3 streams' quorum throughout; muster must lose nothing.
 */
export async function fillDisk(record: FaultRecord, ctx: FaultContext): Promise<void> {
  const node = pickNatsNode(record, ctx);
  if (node === null) return;
  record.at = Date.now();
  const store = node.storeDir;
  const onDisk = `${store}.disk`;
  let mounted = false;
  try {
    await node.kill('SIGTERM');
    renameSync(store, onDisk);
    mkdirSync(store);
    const sizeMb = Math.ceil(Number(run('du', ['-sm', onDisk]).split(/\s/)[0] ?? '0')) + ctx.opts.diskHeadroomMb;
    run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'muster-drill-full', store]);
    mounted = true;
    run('cp', ['-a', `${onDisk}/.`, `${store}/`]);
    await restartNatsNode(node);
    // take every free byte: the store's writes on this node fail until it is freed
    const filler = `${store}/filler`;
    try {
      run('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1M', 'status=none']);
    } catch {
      // dd ends with ENOSPC: the disk is full
    }
    const free = statfsSync(store);
    record.disk = { mb: sizeMb, freeBytesWhenFull: free.bavail * free.bsize, fullMs: ctx.opts.diskFullMs };
    await sleep(ctx.opts.diskFullMs);
    rmSync(filler, { force: true });
    // freed: a node that disabled JetStream on the write errors gets it back at its restart, on disk again
    await node.kill('SIGTERM');
    rmSync(onDisk, { recursive: true, force: true });
    mkdirSync(onDisk);
    run('cp', ['-a', `${store}/.`, `${onDisk}/`]);
  } finally {
    if (mounted) {
      if (node.running) await node.kill('SIGTERM');
      try {
        run('umount', [store]);
      } catch {
        run('umount', ['-l', store]);
      }
    }
    if (existsSync(onDisk)) {
      rmSync(store, { recursive: true, force: true });
      renameSync(onDisk, store);
    }
    if (!node.running) await restartNatsNode(node);
  }
}
