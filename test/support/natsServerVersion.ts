// The version of the nats-server binary the tests run (NATS_SERVER_BIN, PATH or /usr/sbin), for the
// few tests that demonstrate one server version's own behaviour rather than muster's.
import { execFileSync } from 'node:child_process';
import { natsServerBinary } from './natsServer.ts';

/** The version `nats-server --version` prints (e.g. "2.9.10"), without the leading "v". */
export function natsServerVersion(): string {
  const out = execFileSync(natsServerBinary(), ['--version'], { encoding: 'utf8' });
  const m = /v(\d+\.\d+\.\d+)/.exec(out);
  if (m === null) throw new Error(`nats-server --version printed no version: ${out.trim()}`);
  return m[1]!;
}
