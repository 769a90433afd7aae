import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GangLayout } from '@muster/core';
import type { GangFilePaths } from './memberEnvironment.ts';
import { gangNodes } from './memberEnvironment.ts';

/** Where a gang's files go on a node: one folder per job and bind session (a restart or a growth binds a new session). */
export function gangFilePaths(dir: string, jobId: string, session: number): GangFilePaths {
  const folder = join(dir, 'gangs', `${jobId}.${session}`);
  return { hostfile: join(folder, 'hostfile'), gangFile: join(folder, 'gang.json') };
}

/** The hostfile of a gang: `ADDRESS slots=N` per node in node-rank order (as OpenMPI and DeepSpeed read it). */
export function hostfileText(gang: GangLayout): string {
  return gangNodes(gang)
    .map((n) => `${n.address} slots=${n.members.length}\n`)
    .join('');
}

/** Writes a gang's hostfile and gang file (each by rename, so a member never reads half of one). */
export function writeGangFiles(paths: GangFilePaths, jobId: string, gang: GangLayout): void {
  write(paths.hostfile, hostfileText(gang));
  write(paths.gangFile, `${JSON.stringify({ jobId, attempt: gang.attempt, size: gang.size, rendezvous: gang.rendezvous, members: gang.members }, null, 2)}\n`);
}

function write(file: string, text: string): void {
  mkdirSync(join(file, '..'), { recursive: true });
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}
