import type { ActionRow, Button, Select } from '@parley/protocol';
import { invalid } from '../../errors/app-error.js';

/**
 * D65: the rules of components a schema cannot state, answered 400 naming the component: a
 * row holds up to five buttons or one select; a link button (style 5) has a `url` and no
 * `customId`, every other button a `customId` and no `url`; a select's minValues ≤ maxValues ≤
 * its options, values unique; customIds unique within the message.
 */
export function checkComponents(rows: readonly ActionRow[], at = 'components'): void {
  const ids = new Set<string>();
  const own = (id: string, f: string): void => {
    if (ids.has(id)) throw invalid(`${f}.customId`, `repeats "${id}" within the message`);
    ids.add(id);
  };
  rows.forEach((row, i) => {
    const selects = row.components.filter((c) => c.type === 3).length;
    if (selects > 0 && row.components.length > 1)
      throw invalid(`${at}[${i}].components`, 'a row holds one select, or up to five buttons');
    row.components.forEach((c, j) => {
      const f = `${at}[${i}].components[${j}]`;
      if (c.type === 2) checkButton(c, f, own);
      else checkSelect(c, f, own);
    });
  });
}

function checkButton(b: Button, f: string, own: (id: string, f: string) => void): void {
  if (b.label === undefined && b.emoji === undefined)
    throw invalid(`${f}.label`, 'a button needs a label or an emoji');
  if (b.style === 5) {
    if (b.url === undefined) throw invalid(`${f}.url`, 'a link button (style 5) needs a url');
    if (b.customId !== undefined) throw invalid(`${f}.customId`, 'a link button has no customId');
    return;
  }
  if (b.url !== undefined) throw invalid(`${f}.url`, 'only a link button (style 5) has a url');
  if (b.customId === undefined) throw invalid(`${f}.customId`, 'a button needs a customId');
  own(b.customId, f);
}

function checkSelect(s: Select, f: string, own: (id: string, f: string) => void): void {
  own(s.customId, f);
  const min = s.minValues ?? 1;
  const max = s.maxValues ?? 1;
  if (min > max) throw invalid(`${f}.minValues`, 'is greater than maxValues');
  if (max > s.options.length) throw invalid(`${f}.maxValues`, 'is more than its options');
  const values = new Set<string>();
  s.options.forEach((o, k) => {
    if (values.has(o.value)) throw invalid(`${f}.options[${k}].value`, 'repeats a value');
    values.add(o.value);
  });
}

/** A component of a message by its customId (the first one: they are unique). */
export function findComponent(
  rows: readonly ActionRow[] | undefined,
  customId: string,
): Button | Select | undefined {
  for (const row of rows ?? [])
    for (const c of row.components) if (c.customId === customId) return c;
  return undefined;
}
