import { connect } from '@muster/bus';
import type { ConnectOptions } from '@muster/bus';
import { MusterClient } from './musterClient.ts';
import type { MusterClientOptions } from './musterClient.ts';
import { fromBusError } from './fromBusError.ts';

/** Options of `connectClient`. */
export interface ConnectClientOptions extends MusterClientOptions, Pick<ConnectOptions, 'user' | 'pass' | 'token' | 'inboxPrefix'> {
  /** The connection name the server shows in its monitoring (default `muster-client`). */
  name?: string;
  /** Milliseconds to wait for the first connection (default 5000). */
  connectTimeoutMs?: number;
}

/**
 * Connects to NATS and returns a client that owns the connection (`disconnect()` closes it);
 * fails with an `unavailable` MusterError when no server answers at `servers`.
 */
export async function connectClient(servers: string | string[], opts: ConnectClientOptions = {}): Promise<MusterClient> {
  try {
    const { name, connectTimeoutMs, timeoutMs: _timeoutMs, ...auth } = opts;
    const bus = await connect({ servers, name: name ?? 'muster-client', connectTimeoutMs: connectTimeoutMs ?? 5_000, ...auth });
    return new MusterClient(bus, opts, true);
  } catch (err) {
    throw fromBusError(err, `connect to ${Array.isArray(servers) ? servers.join(',') : servers}`);
  }
}
