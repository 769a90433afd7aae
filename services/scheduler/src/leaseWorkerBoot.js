// Entry of the lease thread run from the sources (vitest, tsx): a worker thread does not inherit
// its parent's module hooks (Node.js 20), so it registers tsx itself, then runs the thread. The
// built scheduler starts dist/leaseWorker.js instead.
import { register } from 'tsx/esm/api';

register();
await import('./leaseWorker.ts');
