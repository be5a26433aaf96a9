import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyRequest, FastifySchemaCompiler, RouteOptions } from 'fastify';
import { errors } from './errors.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * Two validators: request bodies are checked strictly (a number where a string belongs is
 * a 422, not silently converted), while query strings, params and headers, which are text
 * on the wire, are coerced to the types their schemas name.
 */
function makeAjv(coerceTypes: boolean | 'array'): Ajv {
  // `verbose`: a failed union's error carries its branches and the value, which is how its
  // message names the branch the value meant (validationMessage).
  const ajv = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: false, allErrors: false, strict: false, verbose: true });
  addFormats(ajv);
  return ajv;
}

const strict = makeAjv(false);
const coercing = makeAjv('array');

// biome-ignore lint/suspicious/noExplicitAny: Fastify's compiler type takes any schema; ajv checks it
export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  const validate: ValidateFunction = (httpPart === 'body' ? strict : coercing).compile(schema as object);
  // biome-ignore lint/suspicious/noExplicitAny: as above
  if (httpPart !== 'body' || !isOptional(schema)) return validate as ReturnType<FastifySchemaCompiler<any>>;
  // A body declared `Type.Optional(…)` may be left out altogether (a POST with no body, which
  // Fastify hands over as null); a body that is sent is checked as usual. Fastify reads
  // `errors` after a false.
  const optional = (data: unknown): boolean => {
    if (data === undefined || data === null) return true;
    const ok = validate(data) as boolean;
    optional.errors = validate.errors;
    return ok;
  };
  optional.errors = null as ValidateFunction['errors'];
  // biome-ignore lint/suspicious/noExplicitAny: as above
  return optional as ReturnType<FastifySchemaCompiler<any>>;
};

/** TypeBox marks `Type.Optional(…)` with a non-enumerable `~optional`, which copies must keep. */
const OPTIONAL = '~optional';
function isOptional(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && (schema as Record<string, unknown>)[OPTIONAL] === true;
}

/**
 * A copy of a request body schema in which every object that does not say what to do with
 * undeclared properties refuses them (`additionalProperties: false`). An unknown field is a
 * 422 naming it, never silently dropped: a misspelt flag must not change what is sent to a
 * customer (README, "The HTTP API in brief"). Objects that declare `additionalProperties`,
 * `patternProperties` (TypeBox records) or `unevaluatedProperties` keep their own rule, and
 * the branches of an `allOf` are left open, since each sees only its own properties.
 */
export function closeObjects<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map((s) => closeObjects(s)) as T;
  if (typeof schema !== 'object' || schema === null) return schema;
  const source = schema as Record<string, unknown>;
  const copy: Record<string, unknown> = { ...source };
  if (source.properties && typeof source.properties === 'object') {
    copy.properties = Object.fromEntries(Object.entries(source.properties).map(([k, v]) => [k, closeObjects(v)]));
  }
  for (const key of ['items', 'anyOf', 'oneOf', 'not', 'then', 'else'] as const) {
    if (source[key] !== undefined) copy[key] = closeObjects(source[key]);
  }
  const isObject = source.type === 'object' || (source.type === undefined && source.properties !== undefined);
  if (isObject && !('additionalProperties' in source) && !('patternProperties' in source) && !('unevaluatedProperties' in source)) {
    copy.additionalProperties = false;
  }
  if (isOptional(source)) Object.defineProperty(copy, OPTIONAL, { value: true, enumerable: false });
  return copy as T;
}

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * An `onRoute` hook: a route's JSON body schema refuses undeclared fields, and a route that
 * declares no body refuses a JSON object with any field at all (an empty `{}` or no body
 * passes). Routes that read raw bytes (provider webhooks, the accounts webhook) get a Buffer
 * as their body, never an object, so they stay untouched: they are verified by signature.
 */
export function refuseUndeclaredFields(route: RouteOptions): void {
  const schema = route.schema;
  if (schema?.body !== undefined) {
    schema.body = closeObjects(schema.body);
    return;
  }
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (!methods.some((m) => WITH_BODY.has(m))) return;
  const hooks = route.preValidation === undefined ? [] : Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation];
  route.preValidation = [...hooks, refuseFieldsOfBodilessRoute];
}

function refuseFieldsOfBodilessRoute(request: FastifyRequest, _reply: unknown, done: (err?: Error) => void): void {
  const body = request.body;
  if (typeof body === 'object' && body !== null && !Buffer.isBuffer(body) && !Array.isArray(body)) {
    const [first] = Object.keys(body);
    if (first !== undefined) {
      done(errors.validation(`body must not have property "${first}": this route takes no body`));
      return;
    }
  }
  done();
}

const isTagged = (tags: unknown[]): tags is string[] => tags.length > 0 && tags.every((t) => typeof t === 'string');

/** The constant a union branch's `type` property must be (a tagged object such as a rule action). */
function tagOf(branch: unknown): unknown {
  const type = (branch as { properties?: { type?: { const?: unknown } } } | null)?.properties?.type;
  return type && 'const' in type ? type.const : undefined;
}

/**
 * The error a refused request is told of: `where` (`body`, `querystring`…) and the value's path,
 * then what is wrong with it. Ajv reports a union of tagged objects (`{type: "note", text}` or
 * `{type: "assign_user", userId}`…) by every branch's first complaint, so the first error would
 * describe a branch the value never meant: an unknown `type` is told as such, with the types
 * there are, and a known one by its own branch's complaint.
 */
export function validationMessage(where: string, all: readonly ErrorObject[]): string {
  let first = all[0];
  // A union's errors follow those of its branches: the last one is the outermost.
  for (const union of [...all].reverse()) {
    const tags = union.keyword === 'anyOf' && Array.isArray(union.schema) ? union.schema.map(tagOf) : [];
    const value: unknown = union.data;
    if (!isTagged(tags) || typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    const tag = (value as { type?: unknown }).type;
    const branch = typeof tag === 'string' ? tags.indexOf(tag) : -1;
    if (branch < 0) return `${where}${union.instancePath.replace(/\//g, '.')}.type must be one of ${tags.map((t) => `"${t}"`).join(', ')}`;
    first = all.find((e) => e.schemaPath.startsWith(`${union.schemaPath}/${branch}/`)) ?? first;
    break;
  }
  const path = first?.instancePath ? `${where}${first.instancePath.replace(/\//g, '.')}` : where;
  const detail =
    first?.keyword === 'required'
      ? `must have property "${String(first.params.missingProperty)}"`
      : first?.keyword === 'additionalProperties'
        ? `must not have property "${String(first.params.additionalProperty)}"`
        : (first?.message ?? 'is invalid');
  return `${path} ${detail}`;
}
