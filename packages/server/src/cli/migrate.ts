import type { Config } from '../config/config.js';
import { openDatabase } from '../storage/db.js';
import { liveServerPid } from '../storage/server-lock.js';
import {
  CURRENT_SCHEMA,
  DatabaseNewerError,
  migrate,
  schemaStatus,
} from '../storage/schema-version.js';
import { CliError, describeDatabase, requireExistingDatabase } from './open.js';
import { printJson } from './output.js';

/**
 * Issue 28: `parley migrate status | up [--dry-run]`. The server migrates at start as before;
 * this lets the operator see and run an upgrade's migrations on their own, after a backup and
 * before starting the new release (docs/deploy.md "Upgrading"). Opens only the database — never
 * the services, which would migrate as they open.
 */
async function withDatabase<T>(
  config: Config,
  fn: (h: ReturnType<typeof openDatabase>) => Promise<T>,
): Promise<T> {
  // A new database is made by starting the server, not by asking about one.
  requireExistingDatabase(config);
  const h = openDatabase(config.databaseUrl, { poolSize: 1 });
  process.stderr.write(`parley: database ${describeDatabase(config)}\n`);
  try {
    return await fn(h);
  } finally {
    await h.close();
  }
}

export async function migrateStatus(config: Config, json: boolean): Promise<void> {
  await withDatabase(config, async (h) => {
    const s = await schemaStatus(h.db);
    if (json) {
      printJson({
        database: s.version ?? null,
        release: CURRENT_SCHEMA,
        applied: s.applied.map((a) => ({ name: a.name, executedAt: a.executedAt.toISOString() })),
        pending: s.pending,
        unknown: s.unknown,
      });
      return;
    }
    const lines = [
      `database schema  ${s.version ?? '(empty)'}`,
      `this release     ${CURRENT_SCHEMA}`,
      ...s.applied.map((a) => `  applied  ${a.name}  ${a.executedAt.toISOString()}`),
      ...s.pending.map((n) => `  pending  ${n}`),
      ...s.unknown.map((n) => `  newer    ${n}  (not known to this release)`),
      s.unknown.length > 0
        ? new DatabaseNewerError(s.unknown).message
        : s.pending.length > 0
          ? `${s.pending.length} migration(s) to run: back up first, then \`parley migrate up\` (or start the server)`
          : 'up to date',
    ];
    process.stdout.write(lines.join('\n') + '\n');
  });
}

export async function migrateUp(config: Config, dryRun: boolean): Promise<void> {
  await withDatabase(config, async (h) => {
    const s = await schemaStatus(h.db);
    if (s.unknown.length > 0) throw new CliError(new DatabaseNewerError(s.unknown).message);
    if (dryRun) {
      process.stdout.write(
        s.pending.length === 0
          ? 'nothing to run: the database is at ' + (s.version ?? '(empty)') + '\n'
          : `would run ${s.pending.length} migration(s):\n${s.pending.map((n) => `  ${n}\n`).join('')}`,
      );
      return;
    }
    // SQLite: a running server holds the file; an upgrade runs with the old server stopped.
    const pid = liveServerPid(config.databaseUrl);
    if (pid !== undefined)
      throw new CliError(
        `a server (process ${pid}) is using the database; stop it first, then migrate`,
      );
    const ran = await migrate(h.db, h.dialect);
    process.stdout.write(
      ran.length === 0
        ? `nothing to run: the database is at ${CURRENT_SCHEMA}\n`
        : `ran ${ran.length} migration(s):\n${ran.map((n) => `  ${n}\n`).join('')}now at ${CURRENT_SCHEMA}\n`,
    );
  });
}
