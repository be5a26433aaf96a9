import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * Two validators: request bodies are checked strictly (a number where a string belongs is
 * a 422, not silently converted), while query strings, params and headers, which are text
 * on the wire, are coerced to the types their schemas name.
 */
function makeAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: false, allErrors: false, strict: false });
  addFormats(ajv);
  return ajv;
}

const strict = makeAjv(false);
const coercing = makeAjv('array');

export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  const validate: ValidateFunction = (httpPart === 'body' ? strict : coercing).compile(schema as object);
  return validate as ReturnType<FastifySchemaCompiler<any>>;
};
