// Entry of the worker of a parallel audit run from the sources (vitest, tsx): a worker thread does
// not inherit its parent's module hooks (Node.js 20), so it registers tsx itself, then runs the
// worker. The built audit (what `muster audit` runs) starts dist/auditWorker.js instead.
import { register } from 'tsx/esm/api';

register();
await import('./auditWorker.ts');
