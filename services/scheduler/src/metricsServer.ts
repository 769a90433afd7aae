import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** A listening `/metrics` endpoint. */
export interface MetricsServer {
  /** Where Prometheus scrapes it (`http://host:port/metrics`). */
  url: string;
  /** Stops listening. */
  close(): Promise<void>;
}

/**
 * Serves `registry` in Prometheus text format on `GET /metrics` (and `HEAD`) at `host:port`; any
 * other path is a 404 and any other method a 405, with a one-line plain-text body.
 */
export async function serveMetrics(registry: Registry, opts: { host: string; port: number }): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const reply = (status: number, body: string, type = 'text/plain; charset=utf-8'): void => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (path !== '/metrics') return reply(404, `not found: ${path ?? ''}; metrics are at /metrics\n`);
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(405, 'only GET /metrics\n');
    registry.metrics().then(
      (text) => reply(200, text, registry.contentType),
      (err: unknown) => reply(500, `collecting metrics failed: ${(err as Error).message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
