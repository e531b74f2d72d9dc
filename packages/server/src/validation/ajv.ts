import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { CURSOR_FORMAT, ID_FORMAT, isCursorText, isIdText } from '@parley/protocol';

/** The JSON Schema validator every transport uses (HTTP routes, CLI input). */
// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule })
  .default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

export function makeAjv(opts: Options): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    ...opts,
  });
  addFormats(ajv);
  // D4: ids in paths and queries are canonical decimals ≤ 2^53−1; cursors also accept 0.
  ajv.addFormat(ID_FORMAT, { type: 'string', validate: isIdText });
  ajv.addFormat(CURSOR_FORMAT, { type: 'string', validate: isCursorText });
  return ajv;
}
