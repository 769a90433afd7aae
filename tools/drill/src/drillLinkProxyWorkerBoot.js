// Entry of the link proxies' thread run from the sources (vitest, tsx): a worker thread does not
// inherit its parent's module hooks (Node.js 20), so it registers tsx itself, then runs the
// proxies. The built drill (what `muster drill` runs) starts dist/drillLinkProxyWorker.js instead.
import { register } from 'tsx/esm/api';

register();
await import('./drillLinkProxyWorker.ts');
