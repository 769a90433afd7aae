// Where the browser tests find Chromium: CHROMIUM_PATH, Debian's package, or else the headless
// Chromium that `npm install` brings inside @sparticuz/chromium (a registry package that ships the
// binary, brotli-compressed; nothing is downloaded), unpacked once into node_modules/.cache.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import packaged from '@sparticuz/chromium';
import { REPO_ROOT } from '@muster/stack';

const SYSTEM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium'];
const CACHE = join(REPO_ROOT, 'node_modules', '.cache', 'muster-chromium');

/** The Chromium executable to drive: CHROMIUM_PATH, else the system's, else the packaged one. */
export async function chromiumPath(): Promise<string> {
  const found = [process.env.CHROMIUM_PATH, ...SYSTEM].find((p): p is string => p !== undefined && p !== '' && existsSync(p));
  return found ?? packagedChromiumPath();
}

/**
 * The packaged headless Chromium, unpacked on first use into a private folder that is then renamed
 * into place, so concurrent test processes never run a half-written binary (the package itself
 * unpacks into os.tmpdir() and trusts any file already there).
 */
export async function packagedChromiumPath(): Promise<string> {
  const final = join(CACHE, packageVersion());
  const binary = join(final, 'chromium');
  if (existsSync(binary)) return binary;
  mkdirSync(CACHE, { recursive: true });
  const scratch = mkdtempSync(join(CACHE, 'unpacking-'));
  const tmpdir = process.env.TMPDIR;
  // the package unpacks into os.tmpdir(), which reads TMPDIR on every call
  process.env.TMPDIR = scratch;
  try {
    await packaged.executablePath();
  } finally {
    if (tmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmpdir;
  }
  try {
    renameSync(scratch, final);
  } catch (err) {
    // another process renamed its copy first: use that one
    rmSync(scratch, { recursive: true, force: true });
    if (!existsSync(binary)) throw err;
  }
  return binary;
}

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', '@sparticuz', 'chromium', 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}
