import type { JsonSchema } from '../specJsonSchemas.ts';

const ANNOTATIONS: ReadonlySet<string> = new Set(['$schema', '$id', 'title', 'description', 'default']);

/**
 * A small structural JSON Schema (2020-12) checker for the keywords the published spec schemas
 * use; returns the first violation as `path: reason`, or undefined. It throws on any keyword it
 * does not know, so a schema that grows a new keyword cannot pass unchecked.
 */
export function checkJsonSchema(schema: JsonSchema, value: unknown, path = ''): string | undefined {
  for (const [keyword, arg] of Object.entries(schema)) {
    if (ANNOTATIONS.has(keyword)) continue;
    const failure = checkKeyword(keyword, arg, schema, value, path);
    if (failure !== undefined) return failure;
  }
  return undefined;
}

// A failure here, at `path` (nested keywords report their own, deeper paths).
function here(path: string, failed: boolean, reason: string): string | undefined {
  return failed ? `${path === '' ? '(root)' : path}: ${reason}` : undefined;
}

function checkKeyword(keyword: string, arg: unknown, schema: JsonSchema, value: unknown, path: string): string | undefined {
  const object = isObject(value) ? value : undefined;
  switch (keyword) {
    case 'type':
      return here(path, !(Array.isArray(arg) ? arg : [arg]).some((t) => hasType(value, t as string)), `not of type ${String(arg)}`);
    case 'enum':
      return here(path, !(arg as unknown[]).includes(value), 'not in enum');
    case 'const':
      return here(path, value !== arg, 'not the const');
    case 'minimum':
      return here(path, typeof value === 'number' && value < (arg as number), 'below minimum');
    case 'maximum':
      return here(path, typeof value === 'number' && value > (arg as number), 'above maximum');
    case 'minLength':
      return here(path, typeof value === 'string' && [...value].length < (arg as number), 'too short');
    case 'maxLength':
      return here(path, typeof value === 'string' && [...value].length > (arg as number), 'too long');
    case 'pattern':
      return here(path, typeof value === 'string' && !new RegExp(arg as string, 'u').test(value), 'does not match pattern');
    case 'minItems':
      return here(path, Array.isArray(value) && value.length < (arg as number), 'too few items');
    case 'maxItems':
      return here(path, Array.isArray(value) && value.length > (arg as number), 'too many items');
    case 'items':
      return Array.isArray(value) ? checkItems(schema, arg as JsonSchema, value, path) : undefined;
    case 'required':
      return here(path, object !== undefined && (arg as string[]).some((k) => !Object.hasOwn(object, k)), 'missing a required field');
    case 'properties':
      return object ? firstOf(Object.entries(arg as Record<string, JsonSchema>), ([k, s]) =>
        Object.hasOwn(object, k) ? checkJsonSchema(s, object[k], join(path, k)) : undefined) : undefined;
    case 'additionalProperties': {
      if (!object) return undefined;
      const declared = Object.keys((schema.properties ?? {}) as object);
      const extra = Object.keys(object).filter((k) => !declared.includes(k));
      if (arg === false) return here(path, extra.length > 0, `unknown field ${extra[0]}`);
      return firstOf(extra, (k) => checkJsonSchema(arg as JsonSchema, object[k], join(path, k)));
    }
    case 'propertyNames':
      return object ? firstOf(Object.keys(object), (k) => checkJsonSchema(arg as JsonSchema, k, join(path, k))) : undefined;
    case 'dependentRequired':
      return here(path, object !== undefined && Object.entries(arg as Record<string, string[]>)
        .some(([k, needs]) => Object.hasOwn(object, k) && needs.some((n) => !Object.hasOwn(object, n))), 'a dependent field is missing');
    case 'anyOf':
      return here(path, !(arg as JsonSchema[]).some((s) => checkJsonSchema(s, value, path) === undefined), 'matches no anyOf branch');
    case 'not':
      return here(path, checkJsonSchema(arg as JsonSchema, value, path) === undefined, 'matches the schema under not');
    case 'oneOf':
      return here(path, (arg as JsonSchema[]).filter((s) => checkJsonSchema(s, value, path) === undefined).length !== 1, 'does not match exactly one oneOf branch');
    case 'prefixItems':
      // checked together with `items` when both are present
      return Array.isArray(value) && !('items' in schema) ? checkItems(schema, {}, value, path) : undefined;
    default:
      throw new Error(`checkJsonSchema: unsupported keyword ${keyword}`);
  }
}

function checkItems(schema: JsonSchema, items: JsonSchema, value: unknown[], path: string): string | undefined {
  const prefix = (schema.prefixItems ?? []) as JsonSchema[];
  return firstOf([...value.entries()], ([i, item]) => checkJsonSchema(prefix[i] ?? items, item, join(path, String(i))));
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    case 'null':
      return value === null;
    default:
      throw new Error(`checkJsonSchema: unsupported type ${type}`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function firstOf<T>(items: readonly T[], check: (item: T) => string | undefined): string | undefined {
  for (const item of items) {
    const failure = check(item);
    if (failure !== undefined) return failure;
  }
  return undefined;
}
