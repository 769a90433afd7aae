// The walls `npm run lint` holds, checked on a small tree of packages laid out like this repository
// and linted with its eslint.config.js: an import cycle fails, and so does reaching into another
// package's files (relatively, or through `@muster/x/src/…`), while the same code through the
// package's index or its `testing` entry passes.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { afterAll, describe, expect, it } from 'vitest';

const CONFIG = fileURLToPath(new URL('../../eslint.config.js', import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Lints a tree of files (path → text) with the repository's config; the rule ids that fired, by file. */
async function lintTree(files: Record<string, string>): Promise<Record<string, string[]>> {
  const root = mkdtempSync(join(tmpdir(), 'muster-lint-walls-'));
  dirs.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const eslint = new ESLint({ cwd: root, overrideConfigFile: CONFIG });
  const results = await eslint.lintFiles(['.']);
  return Object.fromEntries(results.map((r) => [r.filePath.slice(root.length + 1), r.messages.map((m) => m.ruleId ?? m.message)]));
}

const pkg = (name: string) => JSON.stringify({ name, type: 'module', exports: { '.': { source: './src/index.ts' }, './testing': { source: './src/testing/index.ts' } } });

describe('npm run lint holds the walls', () => {
  it('fails on an import cycle of values, not on the same modules without one', async () => {
    const cyclic = await lintTree({
      'libs/p/package.json': pkg('@muster/p'),
      'libs/p/src/a.ts': "import { b } from './b.ts';\n\n/** A. */\nexport const a = (): number => b() + 1;\n",
      'libs/p/src/b.ts': "import { a } from './a.ts';\n\n/** B. */\nexport const b = (): number => 1;\n/** C. */\nexport const c = (): number => a();\n",
    });
    expect(cyclic['libs/p/src/a.ts']).toContain('import-x/no-cycle');
    expect(cyclic['libs/p/src/b.ts']).toContain('import-x/no-cycle');
    const acyclic = await lintTree({
      'libs/p/package.json': pkg('@muster/p'),
      'libs/p/src/a.ts': "import { b } from './b.ts';\n\n/** A. */\nexport const a = (): number => b() + 1;\n",
      'libs/p/src/b.ts': '/** B. */\nexport const b = (): number => 1;\n',
    });
    expect(acyclic).toEqual({ 'libs/p/src/a.ts': [], 'libs/p/src/b.ts': [] });
  });

  it("fails on a deep import into another package's src/, and passes through its index or testing entry", async () => {
    const tree = {
      'package.json': JSON.stringify({ name: 'root', type: 'module', workspaces: ['libs/*'] }),
      'libs/core/package.json': pkg('@muster/core'),
      'libs/core/src/index.ts': "export { two } from './two.ts';\n",
      'libs/core/src/two.ts': '/** Two. */\nexport const two = 2;\n',
      'libs/core/src/testing/index.ts': "/** A fixture. */\nexport const fixture = 'f';\n",
      'libs/other/package.json': pkg('@muster/other'),
    };
    const deep = await lintTree({
      ...tree,
      'test/relative.test.ts': "import { two } from '../libs/core/src/two.ts';\n\nexport const x = two;\n",
      'libs/other/src/named.ts': "import { two } from '@muster/core/src/two.ts';\n\n/** X. */\nexport const x = two;\n",
    });
    expect(deep['test/relative.test.ts']).toContain('import-x/no-relative-packages');
    expect(deep['libs/other/src/named.ts']).toContain('import-x/no-internal-modules');
    const walled = await lintTree({
      ...tree,
      'libs/other/src/named.ts': "import { two } from '@muster/core';\nimport { fixture } from '@muster/core/testing';\n\n/** X. */\nexport const x = [two, fixture];\n",
    });
    expect(walled['libs/other/src/named.ts']).toEqual([]);
  });
});
