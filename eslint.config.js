// ESLint flat config: TypeScript checks everywhere, and the determinism rule that keeps libs/core
// a pure function of the log (no IO, no clock, no randomness, no environment).
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const coreFiles = ['libs/core/src/**/*.ts'];
// the one door to NATS (DESIGN.md §1): libs/bus, and the test support that starts servers
const natsFiles = ['libs/bus/**/*.ts', 'test/support/**/*.ts'];
const coreTestFiles = ['libs/core/src/**/*.test.ts', 'libs/core/src/testing/**/*.ts'];

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '.ci/**', 'test/fixtures/**', '.muster/**', '.lead/**', '.scratch/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  // The walls between packages (CONVENTIONS.md): no import cycle, and no reaching into another
  // package's files; a package offers what others may use in its index (and its tests' helpers in a
  // `testing` entry, e.g. @muster/core/testing). import-x's no-cycle follows value imports (and
  // dynamic ones): `import type` is erased from the JavaScript (verbatimModuleSyntax), so it cannot
  // change the order modules run in. Cycles across packages cannot exist: `tsc -b` rejects circular
  // project references.
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createNodeResolver({ conditionNames: ['source', 'import', 'default'], extensions: ['.ts', '.js'] })],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-relative-packages': 'error',
      'import-x/no-internal-modules': ['error', { forbid: ['@muster/*/src', '@muster/*/src/**', '@muster/*/dist', '@muster/*/dist/**'] }],
    },
  },
  {
    files: ['**/*.ts'],
    ignores: natsFiles,
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ group: ['@nats-io/*'], message: 'Only libs/bus talks to NATS: use its operations (tests: test/support).' }],
      }],
    },
  },
  {
    files: coreFiles,
    ignores: coreTestFiles,
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['node:*'], message: 'libs/core is pure: no Node.js modules.' },
          { group: ['@nats-io/*'], message: 'libs/core is pure: no NATS.' },
          { group: ['pino', 'pino/*'], message: 'libs/core never logs.' },
          { group: ['fs', 'path', 'os', 'crypto', 'child_process', 'net', 'http', 'https', 'worker_threads', 'timers', 'process'], message: 'libs/core is pure: no Node.js modules.' },
        ],
      }],
      'no-restricted-globals': ['error',
        { name: 'process', message: 'libs/core reads no environment.' },
        { name: 'setTimeout', message: 'libs/core has no timers: time arrives in events.' },
        { name: 'setInterval', message: 'libs/core has no timers: time arrives in events.' },
        { name: 'setImmediate', message: 'libs/core has no timers: time arrives in events.' },
        { name: 'queueMicrotask', message: 'libs/core has no timers.' },
        { name: 'performance', message: 'libs/core has no clock: time arrives in events.' },
        { name: 'crypto', message: 'libs/core has no randomness.' },
        { name: 'fetch', message: 'libs/core does no IO.' },
        { name: 'require', message: 'libs/core imports statically.' },
      ],
      'no-restricted-syntax': ['error',
        { selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']", message: 'libs/core has no clock: Date.now() is forbidden; time arrives in events.' },
        { selector: "NewExpression[callee.name='Date']", message: 'libs/core has no clock: new Date() is forbidden; time arrives in events.' },
        { selector: "CallExpression[callee.name='Date']", message: 'libs/core has no clock: Date() is forbidden.' },
        { selector: "MemberExpression[object.name='Math'][property.name='random']", message: 'libs/core has no randomness: Math.random is forbidden.' },
        { selector: "ImportExpression", message: 'libs/core imports statically.' },
        // issue 32: the core is a pure function of the log, so it keeps nothing between calls in a
        // module (a let, or a Map or Set made outside any function); a constant lookup table is
        // typed ReadonlySet or ReadonlyMap (nothing writes to it)
        {
          selector: [
            ":matches(Program, Program > ExportNamedDeclaration) > VariableDeclaration[kind!='const']",
            ":matches(Program, Program > ExportNamedDeclaration) > VariableDeclaration > VariableDeclarator:not([id.typeAnnotation.typeAnnotation.typeName.name=/^Readonly(Set|Map)$/]) NewExpression[callee.name=/^(Weak)?(Map|Set)$/]:not(:function NewExpression)",
            "PropertyDefinition[static=true] > NewExpression[callee.name=/^(Weak)?(Map|Set)$/]",
            // an instance made at module level holds whatever it caches (a JobDeadlines memo) for every driver
            ":matches(Program, Program > ExportNamedDeclaration) > VariableDeclaration > VariableDeclarator > NewExpression:not([callee.name=/^((Weak)?(Map|Set)|RegExp|TextEncoder|TextDecoder|Uint8Array)$/])",
          ].join(', '),
          message: 'libs/core keeps no module-level state (issue 32): a cache lives in the instance that owns what it keys on (the turn context, the host index or its SpecMemo, the session); a constant lookup table is typed ReadonlySet or ReadonlyMap.',
        },
      ],
    },
  },
);
