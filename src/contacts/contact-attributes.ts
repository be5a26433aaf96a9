import { type Static, Type } from 'typebox';
import { errors } from '../http/errors.js';

export const ATTRIBUTES_MAX_KEYS = 50;
export const ATTRIBUTES_MAX_BYTES = 4096;
export const ATTRIBUTE_KEY_MAX_CHARS = 100;

/**
 * A contact's attributes: a flat JSON object of string, number and boolean values. The schema
 * refuses nesting, null and arrays and more than 50 keys (422); `checkAttributes` the rest.
 */
export const ContactAttributes = Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]), {
  maxProperties: ATTRIBUTES_MAX_KEYS,
  description: `a flat object: at most ${ATTRIBUTES_MAX_KEYS} keys, string/number/boolean values, at most ${ATTRIBUTES_MAX_BYTES} bytes as JSON; replaces the whole object`,
});
export type ContactAttributes = Static<typeof ContactAttributes>;

/** Whether attributes fit the limits; the size is that of their JSON text in UTF-8. */
export function attributesProblem(attributes: ContactAttributes): string | null {
  const keys = Object.keys(attributes);
  if (keys.length > ATTRIBUTES_MAX_KEYS) return `attributes must have at most ${ATTRIBUTES_MAX_KEYS} keys`;
  const badKey = keys.find((k) => k.length === 0 || k.length > ATTRIBUTE_KEY_MAX_CHARS);
  if (badKey !== undefined) return `attributes keys must be 1–${ATTRIBUTE_KEY_MAX_CHARS} characters`;
  if (Buffer.byteLength(JSON.stringify(attributes)) > ATTRIBUTES_MAX_BYTES)
    return `attributes must be at most ${ATTRIBUTES_MAX_BYTES} bytes as JSON`;
  return null;
}

/** Throws 422 `validation_failed` when attributes do not fit the limits. */
export function checkAttributes(attributes: ContactAttributes): void {
  const problem = attributesProblem(attributes);
  if (problem) throw errors.validation(`body.attributes: ${problem}`);
}
