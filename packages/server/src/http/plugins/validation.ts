import type { FastifyInstance } from 'fastify';
import { makeAjv } from '../../validation/ajv.js';

/**
 * Two validators: path and query values arrive as text and are coerced (`limit=5` → 5), but a
 * JSON body is validated as sent — `{"content": 123}` is a wrong type (D6), not the string "123".
 */
export function installValidation(app: FastifyInstance): void {
  const coercing = makeAjv({ coerceTypes: true });
  const strict = makeAjv({ coerceTypes: false });
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? strict : coercing).compile(schema),
  );
}
