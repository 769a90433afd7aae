// Where the browser tests find Chromium: Debian's package (.ci/run installs it), or CHROMIUM_PATH.
import { existsSync } from 'node:fs';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium'];

/** The Chromium executable to drive; throws saying how to install it when there is none. */
export function chromiumPath(): string {
  const found = [process.env.CHROMIUM_PATH, ...CANDIDATES].find((p): p is string => p !== undefined && p !== '' && existsSync(p));
  if (found === undefined) throw new Error('Chromium not found: install Debian\'s package (apt-get update && apt-get install -y chromium) or set CHROMIUM_PATH');
  return found;
}
