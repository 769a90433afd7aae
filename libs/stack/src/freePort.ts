import { createServer } from 'node:net';

// ports this process has handed out: the OS may offer a just-closed port again at once, and two
// servers of one cluster given the same port fail at start-up
const handedOut = new Set<number>();

/** A free TCP port on loopback, found by binding port 0, never one this process already handed out. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await bindZero();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

function bindZero(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('could not read the bound port'));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}
