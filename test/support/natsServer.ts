// Real nats-server processes for tests: the process logic lives in @muster/stack (each server on
// free loopback ports with its own temporary data folder, stopped and removed after; never the
// system server on 4222). This file keeps the tests' import path.
export { NatsServerMissingError, freePort, natsServerBinary, startNatsCluster, startNatsServer } from '@muster/stack';
export type { NatsClusterHandle, NatsClusterOptions, NatsServerHandle, NatsServerOptions } from '@muster/stack';
