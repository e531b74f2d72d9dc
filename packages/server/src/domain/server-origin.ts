import type { Domain } from './context.js';

/** The settings row that holds where the last started server answers (its public origin). */
const ORIGIN_KEY = 'server.origin';

/**
 * Issue 28: `parley serve` records its origin (with the port it really listens on); commands
 * run beside it (`parley seed --demo`) print links to that server, not to the default port,
 * unless PARLEY_PUBLIC_URL says otherwise.
 */
export async function recordOrigin(d: Domain, origin: string): Promise<void> {
  await d.db
    .insertInto('settings')
    .values({ key: ORIGIN_KEY, value: origin })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: origin }))
    .execute();
}

/** Use the recorded origin when the configuration names none (PARLEY_PUBLIC_URL unset). */
export async function adoptRecordedOrigin(d: Domain): Promise<void> {
  if (d.config.publicUrl !== undefined) return;
  const row = await d.db
    .selectFrom('settings')
    .select('value')
    .where('key', '=', ORIGIN_KEY)
    .executeTakeFirst();
  if (row) d.urls.setOrigin(row.value);
}
