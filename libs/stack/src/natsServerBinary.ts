import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The command that installs nats-server on Debian and Ubuntu. */
export const INSTALL_NATS_SERVER = 'apt-get update && apt-get install -y nats-server';

/** Thrown when no nats-server binary can be found; the message says how to install one. */
export class NatsServerMissingError extends Error {
  readonly code = 'NATS_SERVER_MISSING';
  constructor() {
    super(
      `nats-server not found on PATH, at /usr/sbin/nats-server or in NATS_SERVER_BIN: install it with ` +
        `\`${INSTALL_NATS_SERVER}\` (Debian/Ubuntu), or set NATS_SERVER_BIN to its path`,
    );
    this.name = 'NatsServerMissingError';
  }
}

/** The nats-server binary: NATS_SERVER_BIN, the first on PATH, or /usr/sbin/nats-server. */
export function natsServerBinary(env: NodeJS.ProcessEnv = process.env): string {
  const candidates = [
    env['NATS_SERVER_BIN'],
    ...(env['PATH'] ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, 'nats-server')),
    '/usr/sbin/nats-server',
  ];
  for (const candidate of candidates) {
    if (candidate === undefined || candidate === '') continue;
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here: try the next place
    }
  }
  throw new NatsServerMissingError();
}
