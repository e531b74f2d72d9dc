import type { FastifyInstance } from 'fastify';
import sjson from 'secure-json-parse';
import { AppError } from '../../errors/app-error.js';

/** D6: JSON bodies over 64 KiB → 413. */
export const JSON_BODY_LIMIT = 64 * 1024;

/**
 * JSON bodies: parsed with prototype-poisoning protection (as Fastify's own parser), and D44 —
 * a bodiless request that still says `Content-Type: application/json` is accepted.
 */
export function installJsonParser(app: FastifyInstance): void {
  // D6: only JSON bodies (and multipart uploads, registered by their routes) are accepted;
  // Fastify's built-in text/plain parser would let a text/plain body reach validation as a
  // string (400) instead of the 415 UNSUPPORTED_MEDIA_TYPE that D6 names.
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: JSON_BODY_LIMIT },
    (_req, body, done) => {
      const text = body as string;
      if (text.trim() === '') return done(null, undefined);
      let value: unknown;
      try {
        value = sjson.parse(text, { protoAction: 'error', constructorAction: 'error' });
      } catch {
        return done(
          new AppError('VALIDATION_ERROR', 'Malformed JSON body', {
            details: [{ field: 'body', problem: 'is not valid JSON' }],
          }),
          undefined,
        );
      }
      // Only a \u escape (or text that is not well-formed itself) can spell such a string: the
      // walk over the value is for bodies that have one (issue 29: every send paid for it).
      const bad = text.includes('\\u') || !isWellFormed(text) ? unstorableString(value) : undefined;
      if (bad !== undefined)
        return done(
          new AppError('VALIDATION_ERROR', `${bad} ${UNSTORABLE}`, {
            details: [{ field: bad, problem: UNSTORABLE }],
          }),
          undefined,
        );
      done(null, value);
    },
  );
}

const UNSTORABLE = 'must be valid Unicode text without U+0000 or unpaired surrogates';
// A surrogate that is not half of a pair.
const UNPAIRED = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const unstorable = (s: string): boolean => s.includes('\0') || UNPAIRED.test(s);
/** ES2024's String.prototype.isWellFormed (Node 20 has it; the ES2023 types do not). */
const isWellFormed = (s: string): boolean =>
  (s as string & { isWellFormed(): boolean }).isWellFormed();

/**
 * D6/D17: JSON escapes can spell strings that no store keeps as sent — PostgreSQL refuses U+0000
 * (a 500), and an unpaired surrogate comes back as U+FFFD (a message that differs from the one
 * the send answered). Such text is bad input: the dotted path of the first one found, if any.
 * Iterative, so a deeply nested body cannot exhaust the stack.
 */
function unstorableString(root: unknown): string | undefined {
  const stack: Array<[unknown, string]> = [[root, '']];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [v, at] = item;
    if (typeof v === 'string') {
      if (unstorable(v)) return at || 'body';
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        const path = Array.isArray(v) ? `${at}[${k}]` : at ? `${at}.${k}` : k;
        if (unstorable(k)) return path;
        stack.push([child, path]);
      }
    }
  }
  return undefined;
}
