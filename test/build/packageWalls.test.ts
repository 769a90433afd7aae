// The package walls, checked: every package declares in its package.json what its files import
// (runtime code in `dependencies`, unit tests and test helpers there or in `devDependencies`),
// declares nothing it does not use, and references in its tsconfig.json every @muster package its
// code imports (so `tsc -b` builds them first and reads only their declarations); the auditor
// knows only core and bus (DESIGN.md §1).
import { readFileSync, readdirSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUILTINS = new Set(builtinModules);

interface PackageJson {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

function packageDirs(): string[] {
  return ['libs', 'services', 'tools'].flatMap((group) =>
    readdirSync(join(ROOT, group), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => join(group, d.name)),
  );
}

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && /\.(ts|js)$/.test(d.name))
    .map((d) => relative(ROOT, join(d.parentPath, d.name)));
}

/** The packages a file imports (bare specifiers, no Node.js built-ins), comment lines left out. */
function importedPackages(file: string): string[] {
  const code = readFileSync(join(ROOT, file), 'utf8')
    .split('\n')
    .filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line))
    .join('\n');
  const names = new Set<string>();
  for (const m of code.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)'([^'.][^']*)'/gm)) {
    const spec = m[1] ?? '';
    if (spec.startsWith('node:') || BUILTINS.has(spec)) continue;
    const parts = spec.split('/');
    names.add(spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? spec));
  }
  return [...names];
}

/** Test code: unit tests, test helpers, and sources no build emits (a tsx boot file). */
const isTestCode = (file: string): boolean => /\.test\.ts$/.test(file) || /\/testing\//.test(file) || /\/src\/.*\.js$/.test(file);

const packages = packageDirs().map((dir) => {
  const pkg = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as PackageJson;
  const tsconfig = JSON.parse(readFileSync(join(ROOT, dir, 'tsconfig.json'), 'utf8')) as { references?: { path: string }[] };
  const files = [...filesUnder(join(dir, 'src')), ...(dir === 'services/cli' ? filesUnder(join(dir, 'bin')) : [])];
  return { dir, pkg, references: (tsconfig.references ?? []).map((r) => relative(ROOT, resolve(ROOT, dir, r.path))), files };
});
const dirOf = new Map(packages.map((p) => [p.pkg.name, p.dir]));

describe('package walls', () => {
  it.each(packages.map((p) => [p.dir, p] as const))('%s declares what it imports, and nothing more', (_dir, p) => {
    const deps = new Set(Object.keys(p.pkg.dependencies ?? {}));
    const devDeps = new Set(Object.keys(p.pkg.devDependencies ?? {}));
    const undeclared: string[] = [];
    const used = new Set<string>();
    for (const file of p.files) {
      for (const name of importedPackages(file)) {
        if (name === p.pkg.name) continue;
        used.add(name);
        if (!(deps.has(name) || (isTestCode(file) && devDeps.has(name)))) undeclared.push(`${file}: ${name}`);
      }
    }
    expect(undeclared).toEqual([]);
    // a dependency found at run time (a program it spawns) is named in the code as a string
    const code = p.files.map((f) => readFileSync(join(ROOT, f), 'utf8')).join('\n');
    const unused = [...deps, ...devDeps].filter((name) => !used.has(name) && !name.startsWith('@types/') && !code.includes(`'${name}/`));
    expect(unused).toEqual([]);
  });

  it.each(packages.map((p) => [p.dir, p] as const))('%s references in tsconfig.json every @muster package its code imports', (_dir, p) => {
    const imported = new Set(p.files.filter((f) => !isTestCode(f)).flatMap(importedPackages).filter((n) => n.startsWith('@muster/') && n !== p.pkg.name));
    const missing = [...imported].filter((name) => !p.references.includes(dirOf.get(name) ?? name));
    expect(missing).toEqual([]);
  });

  it('the auditor depends only on core and bus', () => {
    const auditor = packages.find((p) => p.pkg.name === '@muster/auditor');
    expect(Object.keys(auditor?.pkg.dependencies ?? {}).sort()).toEqual(['@muster/bus', '@muster/core']);
  });
});
