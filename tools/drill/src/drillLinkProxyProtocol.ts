/** One NATS node's client address. */
export interface LinkTarget {
  host: string;
  port: number;
}

/** What the drill asks of its proxy thread. */
export type ProxyAsk = { type: 'delay'; ms: number } | { type: 'connections' } | { type: 'close' };

/** A question on its way to the proxy thread; it is answered with `done` and the same id. */
export type ProxyRequest = ProxyAsk & { id: number };

/** What the proxy thread tells the drill: its ports once listening (or why not), and answers. */
export type ProxyReply =
  | { type: 'listening'; ports: number[] }
  | { type: 'failed'; message: string }
  | { type: 'done'; id: number; value: number };
