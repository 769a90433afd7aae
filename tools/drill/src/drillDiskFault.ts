import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsServerHandle } from '@muster/stack';
import type { FaultContext, FaultRecord } from './drillFaultRecord.ts';
import { sleep } from './drillSleep.ts';
import { COPY_STALL_MS, STALLED_RESTARTS, catchUpOrRestart, pickNatsNode, restartNatsNode, restartNatsNodeAgain, storedLastSeqs } from './drillTargets.ts';

const run = (cmd: string, args: string[]): string => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });

/** Why this machine cannot fill a NATS node's disk (not root, or no mount), or null when it can. */
export function diskFaultUnavailable(): string | null {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'needs root (it mounts a tmpfs under a NATS node\'s store)';
  if (!existsSync('/usr/bin/mount') && !existsSync('/bin/mount')) return 'needs mount(8) (util-linux)';
  return null;
}

// JetStream's own limit of the server on the tmpfs: far above the tmpfs, so that the disk fills
// (ENOSPC), not the limit that nats-server 2.9.10 derives at start from the free space (75 % of
// it: a restart on a tmpfs with 16 MB free limits the node below what its store already holds,
// and its copies stop catching up with "insufficient resources", a different fault)
const MAX_FILE_STORE = 'max_file_store: 1099511627776';

/**
 * How long the node is watched after the filler goes, for an answer of its own: it never came back
 * by itself here (not within 3 s in five drills, not within 15 s in a bare three-node cluster), and
 * a replica whose consumers sit on it waits as long as it is left wedged.
 */
const FREED_WATCH_MS = 1_000;


/**
 * A full disk on one NATS node, and an operator's recovery from it. The node is stopped (SIGTERM),
 * its JetStream store moved onto a tmpfs only a little larger than the store (the drill's own
 * mount, under the drill's folder) and the node restarted on it; a filler file then takes every
 * free byte for `diskFullMs` while the workload goes on, so that node's writes fail with ENOSPC;
 * then the filler goes and the node is watched for `FREED_WATCH_MS` (does it answer again by
 * itself?). Then the recovery (`diskRecovery: 'empty-store'`, the default): the node is killed,
 * the tmpfs unmounted, its JetStream store discarded, and the node started on an empty store, from
 * which it catches up from the other two; the fault ends once the node's own store holds every
 * stream whole to its leader's last sequence, and restarts it on the store it has when a copy
 * stops filling while behind. Restarting it on
 * the store the full disk left behind is what lost acknowledged writes twice on nats-server 2.9.10
 * (docs/drills.md, "A full disk, and an operator's recovery"): a node whose writes failed cannot be
 * trusted with its store, and a raft member with an empty log cannot win an election against the
 * two that have the writes. `same-store` restarts it on the store it left instead (to measure
 * that). The other two nodes keep the R3 streams' quorum throughout.
 */
export async function fillDisk(record: FaultRecord, ctx: FaultContext): Promise<void> {
  const node = pickNatsNode(record, ctx);
  if (node === null) return;
  record.at = Date.now();
  const store = node.storeDir;
  const onDisk = `${store}.disk`;
  const configPath = join(node.dataDir, 'nats.conf');
  const config = readFileSync(configPath, 'utf8');
  let mounted = false;
  let keepStore = false;
  try {
    await node.kill('SIGTERM');
    renameSync(store, onDisk);
    mkdirSync(store);
    const sizeMb = Math.ceil(Number(run('du', ['-sm', onDisk]).split(/\s/)[0] ?? '0')) + ctx.opts.diskHeadroomMb;
    run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'muster-drill-full', store]);
    mounted = true;
    run('cp', ['-a', `${onDisk}/.`, `${store}/`]);
    writeFileSync(configPath, withStoreLimit(config, MAX_FILE_STORE));
    await restartNatsNode(node);
    // take every free byte: the store's writes on this node fail until it is freed
    const filler = `${store}/filler`;
    try {
      run('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1M', 'status=none']);
    } catch {
      // dd ends with ENOSPC: the disk is full
    }
    const free = statfsSync(store);
    const disk: NonNullable<FaultRecord['disk']> = { mb: sizeMb, freeBytesWhenFull: free.bavail * free.bsize, fullMs: ctx.opts.diskFullMs, answeredWhenFull: false, answeredAfterFree: false, recovery: ctx.opts.diskRecovery };
    record.disk = disk;
    await sleep(ctx.opts.diskFullMs);
    disk.answeredWhenFull = await answers(node, 1_000);
    rmSync(filler, { force: true });
    disk.answeredAfterFree = await answersWithin(node, FREED_WATCH_MS);
    // the recovery: its store is not trusted after failed writes; it catches up from its peers
    await node.kill('SIGKILL');
    if (ctx.opts.diskRecovery === 'same-store') {
      // measured only: back to disk with the store the full disk left
      rmSync(onDisk, { recursive: true, force: true });
      mkdirSync(onDisk);
      run('cp', ['-a', `${store}/.`, `${onDisk}/`]);
      keepStore = true;
    }
  } finally {
    if (node.running) await node.kill('SIGKILL');
    if (mounted) {
      try {
        run('umount', [store]);
      } catch {
        run('umount', ['-l', store]);
      }
    }
    writeFileSync(configPath, config);
    rmSync(store, { recursive: true, force: true });
    if (keepStore) {
      renameSync(onDisk, store);
    } else {
      rmSync(onDisk, { recursive: true, force: true });
      mkdirSync(store, { recursive: true });
    }
    await restartNatsNode(node);
  }
  // its copies must fill again from its peers; one that stops filling is restarted on the store it has
  await catchUpOrRestart(
    ctx.cluster.bus,
    node,
    () => restartNatsNodeAgain(node),
    (attempt) => {
      record.stalledRestarts = attempt;
      ctx.progress(`full-disk ${node.name}: its store stopped catching up (${COPY_STALL_MS} ms without a message while behind the leaders): restarting it again on its store`);
    },
    ctx.cutShort,
    STALLED_RESTARTS,
  );
}

/** The config with `limit` added to its jetstream block. */
function withStoreLimit(config: string, limit: string): string {
  const out = config.replace(/jetstream \{([^}]*)\}/, (_all, inner: string) => `jetstream {${inner.trimEnd()}, ${limit} }`);
  if (out === config) throw new Error('no jetstream block in the NATS config');
  return out;
}

/** Whether the node's monitoring port answers a JetStream query (`/jsz`) within `timeoutMs`. */
async function answers(node: NatsServerHandle, timeoutMs: number): Promise<boolean> {
  return (await storedLastSeqs(node.monitorPort, timeoutMs)) !== null;
}

/** Whether the node answers `/jsz` at some point within `ms`. */
async function answersWithin(node: NatsServerHandle, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await answers(node, Math.max(100, Math.min(1_000, deadline - Date.now())))) return true;
    await sleep(200);
  }
  return false;
}
