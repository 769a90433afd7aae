#!/usr/bin/env node
// The `muster` command: runs the TypeScript sources through tsx, so no build step is needed.
import { register } from 'tsx/esm/api';

register();
try {
  await import('../src/main.ts');
} catch (err) {
  // a broken install or source tree: still one line, never a stack trace (MUSTER_DEBUG=1 shows it)
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`muster: internal error: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
  if (process.env.MUSTER_DEBUG === '1' && err instanceof Error) process.stderr.write(`${err.stack ?? ''}\n`);
  process.exit(1);
}
