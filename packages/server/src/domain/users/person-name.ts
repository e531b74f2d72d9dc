import { conflict } from '../../errors/app-error.js';
import type { Db } from '../../storage/db.js';
import { confusableKey, nameKey } from '../../storage/name-key.js';

/** D46: the answer when a person's name is taken (ignoring case). */
export const nameTaken = () => conflict('This name is already taken (names ignore case)');

/** D70: the answer when a name looks like another person's (UTS #39 confusables). */
export const nameConfusable = () =>
  conflict('This name looks too much like another person’s name: choose a more distinct one');

/** D46/D70: the stored keys of a person's name (bot users have none). */
export function personNameKeys(name: string): { name_key: string; skeleton_key: string } {
  return { name_key: nameKey(name), skeleton_key: confusableKey(name) };
}

/**
 * D46/D70: refuse (409) a person's name that another person has, ignoring case, or that is
 * confusable with another person's. The unique indexes on both keys settle a race; this gives
 * the clear answer first.
 */
export async function requireFreeName(db: Db, name: string, exceptUserId?: number): Promise<void> {
  const k = personNameKeys(name);
  let q = db
    .selectFrom('users')
    .select(['name_key'])
    .where((eb) =>
      eb.or([eb('name_key', '=', k.name_key), eb('skeleton_key', '=', k.skeleton_key)]),
    );
  if (exceptUserId !== undefined) q = q.where('id', '!=', exceptUserId);
  const rows = await q.limit(2).execute();
  if (rows.some((r) => r.name_key === k.name_key)) throw nameTaken();
  if (rows.length > 0) throw nameConfusable();
}
