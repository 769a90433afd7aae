import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A file the dashboard serves as it is: its bytes and content type. */
export interface StaticFile {
  body: Buffer;
  type: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * The page's files by URL path, read once at start: `page/*.html|css|svg` from the sources and the
 * modules `tsc -b` compiled into `dist/page/*.js`. Only these paths are served (no file system
 * lookups per request, so no path can reach outside them). Throws when the page was never built.
 */
export function staticFiles(): Map<string, StaticFile> {
  // src/ and dist/ are siblings in the package: the same relative paths work from either
  const pageDir = fileURLToPath(new URL('../page/', import.meta.url));
  const builtDir = fileURLToPath(new URL('../dist/page/', import.meta.url));
  if (!existsSync(join(builtDir, 'app.js'))) {
    throw new Error(`the dashboard's page is not built (${join(builtDir, 'app.js')} is missing): run npm run build`);
  }
  const files = new Map<string, StaticFile>();
  const add = (dir: string, names: string[]): void => {
    for (const name of names) {
      const type = TYPES[extname(name)];
      if (type !== undefined) files.set(`/${name}`, { body: readFileSync(join(dir, name)), type });
    }
  };
  add(pageDir, readdirSync(pageDir).filter((n) => !n.endsWith('.ts') && !n.endsWith('.js')));
  add(builtDir, readdirSync(builtDir).filter((n) => n.endsWith('.js')));
  const index = files.get('/index.html');
  if (index !== undefined) files.set('/', index);
  return files;
}
