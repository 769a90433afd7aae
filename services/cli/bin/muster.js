#!/usr/bin/env node
// The `muster` command: runs the JavaScript that `tsc -b` built into dist/ (npm install and npm ci
// build it, through the root's prepare script), so nothing is compiled when it starts.
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('muster: internal error: the command is not built: run `npm run build` (tsc -b) in the repository\n');
  process.exit(1);
}
try {
  await import(main.href);
} catch (err) {
  // a broken install: still one line, never a stack trace (MUSTER_DEBUG=1 shows it)
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`muster: internal error: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
  if (process.env.MUSTER_DEBUG === '1' && err instanceof Error) process.stderr.write(`${err.stack ?? ''}\n`);
  process.exit(1);
}
