import type { ConnectionChange } from '@muster/bus';

/** The NATS connections of a replica that are counted: the main one and the one for snapshots. */
export type CountedConnection = 'main' | 'snapshots';

/** One count of `muster_nats_connection_changes_total`. */
export interface ConnectionChangeCount {
  connection: CountedConnection;
  kind: ConnectionChange['kind'];
  count: number;
}

/**
 * What a replica's NATS connections went through since the process started (disconnects,
 * reconnects, and the moves off a server that stopped answering pings or serving JetStream), by
 * connection and kind: kept from before the metrics are served, so a move during a rebuild counts.
 */
export class ConnectionChanges {
  private readonly counts = new Map<CountedConnection, Map<ConnectionChange['kind'], number>>();

  /** Counts one change heard on `connection`. */
  heard(connection: CountedConnection, change: ConnectionChange): void {
    let kinds = this.counts.get(connection);
    if (kinds === undefined) this.counts.set(connection, (kinds = new Map()));
    kinds.set(change.kind, (kinds.get(change.kind) ?? 0) + 1);
  }

  /** Every count so far. */
  entries(): ConnectionChangeCount[] {
    return [...this.counts].flatMap(([connection, kinds]) => [...kinds].map(([kind, count]) => ({ connection, kind, count })));
  }
}
