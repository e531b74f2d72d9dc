import { Type } from 'typebox';

/** D3: ids are positive integers ≤ 2^53−1, safe as JSON numbers. */
export const MAX_ID = Number.MAX_SAFE_INTEGER;

/** A canonical decimal id: no sign, no leading zero, no exponent (D4). */
const ID_TEXT = /^[1-9][0-9]{0,15}$/;
const CURSOR_TEXT = /^(0|[1-9][0-9]{0,15})$/;

export function isIdText(s: string): boolean {
  return ID_TEXT.test(s) && Number(s) <= MAX_ID;
}

/** Cursors (before/after) also accept `0` (D4, D16). */
export function isCursorText(s: string): boolean {
  return CURSOR_TEXT.test(s) && Number(s) <= MAX_ID;
}

/** Formats registered with the server's validator (see the server's ajv setup). */
export const ID_FORMAT = 'parley-id';
export const CURSOR_FORMAT = 'parley-cursor';

/** An id as it appears in a path or query string. */
export const IdParam = Type.String({
  format: ID_FORMAT,
  description: 'canonical decimal id, 1 … 2^53−1 (D4)',
  examples: ['1234567890123'],
});
export const CursorParam = Type.String({
  format: CURSOR_FORMAT,
  description: 'canonical decimal id or 0; need not name an existing message (D16)',
});

/** An id in a JSON body or response. */
export const Id = Type.Integer({ minimum: 1, maximum: MAX_ID });
