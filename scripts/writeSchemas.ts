// Writes the published JSON Schemas (schemas/*.schema.json) from the zod schemas in libs/core.
// Run with `npm run schemas`; a test fails when the committed files differ from this output.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { specSchemaFiles } from '@muster/core';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
for (const [path, text] of Object.entries(specSchemaFiles())) {
  const target = join(root, path);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, text);
  console.log(`wrote ${path}`);
}
