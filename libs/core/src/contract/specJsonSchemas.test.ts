import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { jobSpecJsonSchema, nodeSpecJsonSchema, specSchemaFiles } from './specJsonSchemas.ts';
import { BAD_JOB_SPECS, BAD_NODE_SPECS, brokenJobSpec, brokenNodeSpec, VALIDATOR_ONLY } from './testing/badSpecs.ts';
import { checkJsonSchema } from './testing/checkJsonSchema.ts';
import { designAlternativesExample, designJobSpecExample, designNodeSpecExample, designShorthandExample } from './testing/designExamples.ts';
import { validateJobSpec } from './validateJobSpec.ts';
import { validateNodeSpec } from './validateNodeSpec.ts';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));

describe('published JSON Schemas', () => {
  it.each(Object.entries(specSchemaFiles()))('%s is what the zod schemas emit now (run `npm run schemas`)', (path, text) => {
    expect(readFileSync(`${repoRoot}${path}`, 'utf8')).toBe(text);
  });

  it('accept the DESIGN.md examples, which zod accepts too', () => {
    for (const example of [designJobSpecExample(), designShorthandExample(), designAlternativesExample()]) {
      expect(checkJsonSchema(jobSpecJsonSchema(), example)).toBeUndefined();
      expect(validateJobSpec(example).ok).toBe(true);
    }
    expect(checkJsonSchema(nodeSpecJsonSchema(), designNodeSpecExample())).toBeUndefined();
    expect(validateNodeSpec(designNodeSpecExample()).ok).toBe(true);
  });

  it('accept the normalised specs validation produces', () => {
    const job = validateJobSpec(designJobSpecExample());
    const node = validateNodeSpec(designNodeSpecExample());
    expect(job.ok && checkJsonSchema(jobSpecJsonSchema(), job.value)).toBeUndefined();
    const alternatives = validateJobSpec(designAlternativesExample());
    expect(alternatives.ok && checkJsonSchema(jobSpecJsonSchema(), alternatives.value)).toBeUndefined();
    expect(node.ok && checkJsonSchema(nodeSpecJsonSchema(), node.value)).toBeUndefined();
  });

  it.each(BAD_JOB_SPECS.filter(([name]) => !VALIDATOR_ONLY.has(name)))('job schema rejects %s, as zod does', (_name, mutate) => {
    expect(checkJsonSchema(jobSpecJsonSchema(), brokenJobSpec(mutate))).toBeDefined();
  });

  it.each(BAD_NODE_SPECS.filter(([name]) => !VALIDATOR_ONLY.has(name)))('node schema rejects %s, as zod does', (_name, mutate) => {
    expect(checkJsonSchema(nodeSpecJsonSchema(), brokenNodeSpec(mutate))).toBeDefined();
  });

  it('let through only what the description says they cannot express', () => {
    for (const [, mutate] of BAD_JOB_SPECS.filter(([name]) => VALIDATOR_ONLY.has(name))) expect(checkJsonSchema(jobSpecJsonSchema(), brokenJobSpec(mutate))).toBeUndefined();
    const description = String(jobSpecJsonSchema().description);
    for (const rule of ['role names are unique', 'at most 4096 members', 'ptile is allowed only with policy "pack"', 'select must parse', 'minInstances is 0 or exactly the gang size']) {
      expect(description).toContain(rule);
    }
    for (const [, mutate] of BAD_NODE_SPECS.filter(([name]) => VALIDATOR_ONLY.has(name))) expect(checkJsonSchema(nodeSpecJsonSchema(), brokenNodeSpec(mutate))).toBeUndefined();
    expect(String(nodeSpecJsonSchema().description)).toContain('GPU ids are unique');
  });
});
