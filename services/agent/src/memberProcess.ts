import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import type { MemberOutput } from './memberOutput.ts';

/** Everything needed to start one member. */
export interface MemberLaunch {
  /** argv (run directly) or a string (run by `/bin/sh -c`); absent: a simulated member. */
  command?: string[] | string;
  /** muster's variables for the member (`memberEnvironment`), laid over the agent's own environment. */
  env: Record<string, string>;
  /** How long a simulated member runs. */
  runtimeMs: number;
  /** Where a real member's stdout and stderr go; null: discarded. */
  output: MemberOutput | null;
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
  const out = launch.output === null ? 'ignore' : 'pipe';
  // a group of its own, so that a stop reaches what `sh -c` started too
  const child: ChildProcess = spawn(file, args, { env: { ...process.env, ...launch.env }, stdio: ['ignore', out, out], detached: true });
  const output = launch.output;
  if (output !== null) {
    child.stdout?.on('data', (chunk: Buffer) => output.write('stdout', chunk));
    child.stderr?.on('data', (chunk: Buffer) => output.write('stderr', chunk));
    // the last lines once both pipes are closed (the group may hold them past the leader's exit)
    let open = 2;
    const closed = (): void => {
      if (--open === 0) void output.end();
    };
    child.stdout?.once('close', closed);
    child.stderr?.once('close', closed);
    child.once('error', () => void output.end());
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
