import { describe, expect, it } from 'vitest';
import { designJobSpecExample, designNodeSpecExample } from './testing/designExamples.ts';
import { parseJobSpecJson, parseNodeSpecJson } from './parseSpecJson.ts';
import { validateJobSpec } from './validateJobSpec.ts';
import { validateNodeSpec } from './validateNodeSpec.ts';

describe('parseJobSpecJson / parseNodeSpecJson', () => {
  it('parses and validates JSON text', () => {
    expect(parseJobSpecJson(JSON.stringify(designJobSpecExample()))).toEqual(validateJobSpec(designJobSpecExample()));
    expect(parseNodeSpecJson(JSON.stringify(designNodeSpecExample()))).toEqual(validateNodeSpec(designNodeSpecExample()));
  });

  it.each(['', '{', '{"id": }', "{'id': 'x'}", 'nul'])('rejects %j as invalid JSON at the root', (text) => {
    for (const parse of [parseJobSpecJson, parseNodeSpecJson]) {
      const result = parse(text);
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.error.path).toBe('');
        expect(result.error.message).toMatch(/^invalid JSON: ./);
      }
    }
  });

  it('passes valid JSON that is not a spec on to validation', () => {
    expect(parseJobSpecJson('[1]')).toEqual({ ok: false, error: { path: '', message: 'job spec: must be an object (got an array)' } });
    expect(parseNodeSpecJson('{"id":"n1"}')).toEqual({ ok: false, error: { path: 'capacity', message: 'capacity: is required' } });
  });
});
