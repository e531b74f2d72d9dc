import type { Kysely, Migration } from 'kysely';
import { confusableKey } from '../name-key.js';

/**
 * D70: a person's name may not be confusable with another person's. Each person gets the UTS #39
 * skeleton key of their name beside the name key, unique among people (bots have none). Older
 * databases may hold people whose names are confusable: the oldest keeps the key, the others get
 * none (they keep their name and login; a rename gives them a key and is checked like any).
 */
export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    const k = db as Kysely<Record<string, Record<string, unknown>>>;
    await db.schema.alterTable('users').addColumn('skeleton_key', 'text').execute();
    const people = await k
      .selectFrom('users')
      .select(['id', 'name'])
      .where('is_bot', '=', 0)
      .orderBy('id', 'asc')
      .execute();
    const taken = new Set<string>();
    for (const p of people) {
      const key = confusableKey(String(p['name']));
      if (taken.has(key)) continue;
      taken.add(key);
      await k.updateTable('users').set({ skeleton_key: key }).where('id', '=', p['id']).execute();
    }
    await db.schema
      .createIndex('users_skeleton_key')
      .on('users')
      .column('skeleton_key')
      .unique()
      .execute();
  },
};
