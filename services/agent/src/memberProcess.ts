import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

/** Everything needed to start one member. */
export interface MemberLaunch {
  jobId: string;
  member: number;
  role: string;
  nodeId: string;
  gpuIds: number[];
  /** argv (run directly) or a string (run by `/bin/sh -c`); absent: a simulated member. */
  command?: string[] | string;
  env?: Record<string, string>;
  /** How long a simulated member runs. */
  runtimeMs: number;
  /** Where a real member's stdout and stderr go (appended); null: discarded. */
  outputFile: string | null;
}

/** How a member ended. */
export interface MemberExit {
  ok: boolean;
  exitCode: number | null;
  signal: string | null;
  /** Why it could not start, if it could not. */
  error?: string;
}

/** A started member. */
export interface MemberHandle {
  /** Whether it runs a real process (false: simulated). */
  readonly real: boolean;
  /** Resolves when it ends, however it ends. */
  readonly exited: Promise<MemberExit>;
  /** Ends it: a simulated member at once; a process by SIGTERM to its group, then SIGKILL after `graceMs`. */
  stop(graceMs: number): Promise<void>;
}

/** The environment of a member's process: the agent's, the role's, then muster's own variables. */
function memberEnv(launch: MemberLaunch, base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    ...base,
    ...launch.env,
    MUSTER_JOB_ID: launch.jobId,
    MUSTER_MEMBER: String(launch.member),
    MUSTER_ROLE: launch.role,
    MUSTER_NODE: launch.nodeId,
    CUDA_VISIBLE_DEVICES: launch.gpuIds.join(','),
  };
}

/** Starts a member: its command as a child process in a group of its own, or a timer of `runtimeMs`. */
export function launchMember(launch: MemberLaunch): MemberHandle {
  return launch.command === undefined ? simulated(launch.runtimeMs) : real(launch, launch.command);
}

function simulated(runtimeMs: number): MemberHandle {
  let finish: (exit: MemberExit) => void = () => undefined;
  const exited = new Promise<MemberExit>((resolve) => {
    finish = resolve;
  });
  const timer = setTimeout(() => finish({ ok: true, exitCode: 0, signal: null }), runtimeMs);
  return {
    real: false,
    exited,
    stop: async () => {
      clearTimeout(timer);
      finish({ ok: false, exitCode: null, signal: 'SIGTERM' });
    },
  };
}

function real(launch: MemberLaunch, command: string[] | string): MemberHandle {
  const [file, args] = typeof command === 'string' ? ['/bin/sh', ['-c', command]] : [command[0] as string, command.slice(1)];
  let out: number | 'ignore' = 'ignore';
  if (launch.outputFile !== null) {
    mkdirSync(dirname(launch.outputFile), { recursive: true });
    out = openSync(launch.outputFile, 'a');
  }
  let child: ChildProcess;
  try {
    // a group of its own, so that a stop reaches what `sh -c` started too
    child = spawn(file, args, { env: memberEnv(launch, process.env), stdio: ['ignore', out, out], detached: true });
  } finally {
    if (typeof out === 'number') closeSync(out);
  }
  const exited = new Promise<MemberExit>((resolve) => {
    child.once('error', (err) => resolve({ ok: false, exitCode: null, signal: null, error: err.message }));
    child.once('exit', (code, signal) => resolve({ ok: code === 0, exitCode: code, signal }));
  });
  const signalGroup = (signal: NodeJS.Signals): void => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // the group is already gone
    }
  };
  return {
    real: true,
    exited,
    stop: async (graceMs) => {
      signalGroup('SIGTERM');
      const timer = setTimeout(() => signalGroup('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
      // whatever the group leader left behind goes too
      signalGroup('SIGKILL');
    },
  };
}
