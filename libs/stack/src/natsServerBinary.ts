import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The command that installs nats-server on Debian and Ubuntu. */
export const INSTALL_NATS_SERVER = 'apt-get update && apt-get install -y nats-server';

/** Thrown when no nats-server binary can be found; the message says how to install one. */
export class NatsServerMissingError extends Error {
  readonly code = 'NATS_SERVER_MISSING';
  /** `explicit`: the NATS_SERVER_BIN that names no executable, when it was set. */
  constructor(explicit?: string) {
    super(
      `${explicit === undefined ? 'nats-server not found on PATH, at /usr/sbin/nats-server or in NATS_SERVER_BIN' : `nats-server not found at NATS_SERVER_BIN=${explicit}`}: install it with ` +
        `\`${INSTALL_NATS_SERVER}\` (Debian/Ubuntu), or set NATS_SERVER_BIN to its path`,
    );
    this.name = 'NatsServerMissingError';
  }
}

/**
 * The nats-server binary: NATS_SERVER_BIN when set (and then only it, so a wrong value is reported
 * rather than passed over), otherwise the first on PATH, or /usr/sbin/nats-server (where Debian's
 * package puts it); throws NatsServerMissingError, which says how to install it, when there is none.
 */
export function natsServerBinary(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env['NATS_SERVER_BIN'];
  const candidates =
    explicit !== undefined && explicit !== ''
      ? [explicit]
      : [...(env['PATH'] ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, 'nats-server')), '/usr/sbin/nats-server'];
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here: try the next place
    }
  }
  throw new NatsServerMissingError(explicit !== undefined && explicit !== '' ? explicit : undefined);
}
