import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openServices } from '../../src/services.js';
import { CURRENT_SCHEMA, DatabaseNewerError } from '../../src/storage/schema-version.js';
import { createHarness, dbDescribe, dialect, type Harness } from '../helpers/harness.js';
import { freshDataDir } from '../helpers/media.js';

// Issue 28: a database that has run a migration this release does not know was written by a
// newer release; opening it is refused (before anything is migrated or read), on both dialects.

dbDescribe('a database newer than this release', () => {
  let h: Harness;
  // SQLite: a file (a second opening of `:memory:` would be another database).
  const data = freshDataDir();
  beforeAll(async () => {
    h = await createHarness(
      dialect === 'sqlite' ? { databaseUrl: `sqlite:${path.join(data.dir, 'parley.db')}` } : {},
    );
  });
  afterAll(async () => {
    await h.close();
    data.remove();
  });

  it('is refused on opening with DatabaseNewerError naming both versions', async () => {
    await sql`insert into kysely_migration (name, timestamp) values ('9999-from-the-future', ${new Date().toISOString()})`.execute(
      h.services.domain.db,
    );
    const err = await openServices(h.config, {
      ...(h.database.schema ? { schema: h.database.schema } : {}),
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DatabaseNewerError);
    expect((err as Error).message).toContain('schema 9999-from-the-future');
    expect((err as Error).message).toContain(`this release knows (${CURRENT_SCHEMA})`);
  });
});
