import { z } from 'zod';
import { jobSpecSchema } from './jobSpecSchema.ts';
import { nodeSpecSchema } from './nodeSpecSchema.ts';
import { policySpecSchema } from './policySpecSchema.ts';
import { queueSpecSchema } from './queueSpecSchema.ts';
import { MAX_GANG_SIZE } from './specLimits.ts';

/** A JSON Schema document, as plain JSON data. */
export type JsonSchema = Record<string, unknown>;

const JOB_DESCRIPTION = [
  'A muster JobSpec, contract v1 (DESIGN.md section 4; field reference in docs/job-spec.md).',
  'Publish on muster.in.submit or muster.api.submit.',
  'Rules this schema cannot express, which the scheduler enforces:',
  'role names are unique within a job;',
  `the gang (all roles' counts, or tasks) has at most ${MAX_GANG_SIZE} members;`,
  'placement.ptile is allowed only with policy "pack";',
  'select must parse as a select expression (a syntax error is rejected with its position);',
  'minInstances is 0 or exactly the gang size (with alternatives: the gang size of one of them);',
  'the same rules hold within each of alternatives, whose paths start alternatives.<i>.',
].join(' ');

// either roles, or the tasks + resources shorthand: never both, never neither
const ONE_REQUEST = [{ required: ['roles'] }, { required: ['tasks', 'resources'] }];

const NODE_DESCRIPTION = [
  'A muster NodeSpec, contract v1 (DESIGN.md section 4; field reference in docs/job-spec.md).',
  'Publish on muster.in.node.<id>.register, where <id> equals the id field.',
  'Rule this schema cannot express, which the scheduler enforces: GPU ids are unique within a node.',
].join(' ');

/** The published JSON Schema of the JobSpec wire shape (schemas/job-spec.schema.json). */
export function jobSpecJsonSchema(): JsonSchema {
  const { $schema, ...body } = z.toJSONSchema(jobSpecSchema, { io: 'input' });
  const alternatives = (body.properties as Record<string, JsonSchema>).alternatives!;
  alternatives.items = { ...(alternatives.items as JsonSchema), oneOf: ONE_REQUEST, dependentRequired: { tasks: ['resources'], resources: ['tasks'] } };
  return {
    $schema,
    $id: 'urn:muster:schema:job-spec:v1',
    title: 'muster JobSpec',
    description: JOB_DESCRIPTION,
    ...body,
    // one request at the top level, or alternatives (DESIGN.md §13) with no top-level placement or select
    oneOf: [
      ...ONE_REQUEST.map((request) => ({ ...request, not: { required: ['alternatives'] } })),
      { required: ['alternatives'], not: { anyOf: [{ required: ['placement'] }, { required: ['select'] }] } },
    ],
    dependentRequired: { tasks: ['resources'], resources: ['tasks'] },
  };
}

/** The published JSON Schema of the NodeSpec wire shape (schemas/node-spec.schema.json). */
export function nodeSpecJsonSchema(): JsonSchema {
  const { $schema, ...body } = z.toJSONSchema(nodeSpecSchema, { io: 'input' });
  return {
    $schema,
    $id: 'urn:muster:schema:node-spec:v1',
    title: 'muster NodeSpec',
    description: NODE_DESCRIPTION,
    ...body,
  };
}

/** The published JSON Schema of the PolicySpec (schemas/policy-spec.schema.json). */
export function policySpecJsonSchema(): JsonSchema {
  const { $schema, ...body } = z.toJSONSchema(policySpecSchema, { io: 'input' });
  return {
    $schema,
    $id: 'urn:muster:schema:policy-spec:v1.1',
    title: 'muster PolicySpec',
    description: 'A muster PolicySpec, contract v1.1 (DESIGN.md section 11). Publish on muster.in.policy (an operator\'s input); the fields given replace the ones in force.',
    ...body,
  };
}

/** The published JSON Schema of the QueueSpec (schemas/queue-spec.schema.json). */
export function queueSpecJsonSchema(): JsonSchema {
  const { $schema, ...body } = z.toJSONSchema(queueSpecSchema, { io: 'input' });
  return {
    $schema,
    $id: 'urn:muster:schema:queue-spec:v1.1',
    title: 'muster QueueSpec',
    description: [
      'A muster QueueSpec, contract v1.1 (DESIGN.md section 12). Publish on muster.in.queue.<name>.set (an operator\'s input), where <name> equals the name field; it creates or replaces that queue.',
      'Rules this schema cannot express, which the scheduler enforces: the parent exists and the queues stay a tree;',
      'a guarantee is within the queue\'s own max; defaultRuntimeLimitMs is within maxRuntimeLimitMs.',
    ].join(' '),
    ...body,
  };
}

/** Published schema files by repository path, in the exact text `npm run schemas` writes. */
export function specSchemaFiles(): Record<string, string> {
  return {
    'schemas/job-spec.schema.json': `${JSON.stringify(jobSpecJsonSchema(), null, 2)}\n`,
    'schemas/node-spec.schema.json': `${JSON.stringify(nodeSpecJsonSchema(), null, 2)}\n`,
    'schemas/policy-spec.schema.json': `${JSON.stringify(policySpecJsonSchema(), null, 2)}\n`,
    'schemas/queue-spec.schema.json': `${JSON.stringify(queueSpecJsonSchema(), null, 2)}\n`,
  };
}
