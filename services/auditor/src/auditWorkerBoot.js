// Entry of the worker of a parallel audit: a worker thread does not inherit its parent's module
// hooks (Node.js 20), so it registers tsx itself, as the `muster` command does, then runs the worker.
import { register } from 'tsx/esm/api';

register();
await import('./auditWorker.ts');
