import type { ErrorObject } from 'ajv';
import type { FastifyInstance } from 'fastify';
import { makeAjv } from '../../validation/ajv.js';

/**
 * Two validators: path and query values arrive as text and are coerced (`limit=5` → 5), but a
 * JSON body is validated as sent — `{"content": 123}` is a wrong type (D6), not the string "123".
 */
export function installValidation(app: FastifyInstance): void {
  const coercing = makeAjv({ coerceTypes: true });
  const strict = makeAjv({ coerceTypes: false });
  // compiled on the route's first request (http/lazy-compilers.ts); Fastify reads `errors` off
  // the function it was given, so the wrapper carries the compiled validator's
  app.setValidatorCompiler(({ schema, httpPart }) => {
    let real: Validate | undefined;
    const compile = (): Validate =>
      httpPart === 'body'
        ? strict.compile(schema)
        : decimalIntegers(schema as JsonSchema, coercing.compile(schema));
    const validate: Validate = (data) => {
      real ??= compile();
      const ok = real(data);
      validate.errors = real.errors ?? null;
      return ok;
    };
    return validate;
  });
}

type JsonSchema = { properties?: Record<string, { type?: unknown }> };
type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** A plain decimal integer as text, as D4 asks of ids: `-1` passes here to fail on `minimum`. */
const DECIMAL = /^-?(0|[1-9][0-9]*)$/;

/**
 * ajv coerces any text JavaScript reads as a whole number (`1e2`, `+5`, `0x10`, ` 5`) into an
 * integer; a query's integers must be written plainly (D16 `limit`: "not an integer → 400").
 * Checked on the text before coercion, with ajv's own error shape so the D5 details are alike.
 */
function decimalIntegers(schema: JsonSchema, validate: Validate): Validate {
  const ints = Object.entries(schema.properties ?? {})
    .filter(([, s]) => s.type === 'integer')
    .map(([k]) => k);
  if (ints.length === 0) return validate;
  const checked: Validate = (data) => {
    const values = (data ?? {}) as Record<string, unknown>;
    for (const key of ints) {
      const v = values[key];
      if (typeof v === 'string' && !DECIMAL.test(v)) {
        checked.errors = [
          {
            instancePath: `/${key}`,
            schemaPath: `#/properties/${key}/type`,
            keyword: 'type',
            params: { type: 'integer' },
            message: 'must be integer',
          },
        ];
        return false;
      }
    }
    const ok = validate(data);
    checked.errors = validate.errors ?? null;
    return ok;
  };
  return checked;
}
