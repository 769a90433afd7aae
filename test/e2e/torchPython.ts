// Finds a python that imports torch.distributed (Debian's python3-torch), for the tests that run a
// real torch program as a gang.
import { spawnSync } from 'node:child_process';

/** The pythons tried, in order: $MUSTER_TORCH_PYTHON, Debian's, then the first on PATH. */
const CANDIDATES = [process.env.MUSTER_TORCH_PYTHON, '/usr/bin/python3', 'python3'].filter((p): p is string => p !== undefined && p !== '');

/** A python executable with torch.distributed and gloo, or an Error that says what is missing. */
export function torchPython(): { python: string; version: string } | Error {
  const tried: string[] = [];
  for (const python of CANDIDATES) {
    const run = spawnSync(python, ['-c', 'import torch, torch.distributed as d; assert d.is_gloo_available(); print(torch.__version__)'], { encoding: 'utf8', timeout: 120_000 });
    if (run.status === 0) return { python, version: run.stdout.trim() };
    tried.push(`${python}: ${run.error?.message ?? (run.stderr.trim().split('\n').pop() || `exit ${run.status}`)}`);
  }
  return new Error(
    `no python with torch.distributed (gloo) found; tried ${tried.join('; ')}. Install Debian's python3-torch (apt-get install python3-torch; .ci/run does) or set MUSTER_TORCH_PYTHON to a python that has torch`,
  );
}
