import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.js';
import type { Services } from '../services.js';
import { sqliteFile } from '../storage/server-lock.js';

/** A refusal the CLI states in one line (exit 1), never a stack trace. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    /** a D6 code when the refusal is the same as the API's (bad input) */
    readonly code?: string,
  ) {
    super(message);
  }
}

/** The database as the operator may read it: a PostgreSQL password is masked. */
export function describeDatabase(config: Config): string {
  const file = sqliteFile(config.databaseUrl);
  if (file !== undefined) return `SQLite ${path.resolve(file)}`;
  if (config.databaseUrl === 'sqlite::memory:') return 'SQLite in memory';
  try {
    const u = new URL(config.databaseUrl);
    if (u.password !== '') u.password = '***';
    return `PostgreSQL ${u.toString()}`;
  } catch {
    return 'PostgreSQL';
  }
}

/**
 * Commands that work on existing data never create an empty database by accident (issue #13:
 * run from another folder, the CLI made a new ./data and answered "Unknown user").
 */
export function requireExistingDatabase(config: Config): void {
  const file = sqliteFile(config.databaseUrl);
  if (file === undefined || existsSync(file)) return;
  const dir = path.dirname(path.resolve(file));
  const where = existsSync(dir)
    ? `no database ${path.resolve(file)}`
    : `data directory ${dir} does not exist`;
  throw new CliError(
    `${where}; run where the server's data directory is, or point elsewhere with --data-dir <dir>, PARLEY_DATA_DIR or PARLEY_DATABASE_URL`,
  );
}

/** Open the services for a command, naming the database on stderr (D52: always). */
export async function openForCli(
  config: Config,
  opts: { create?: boolean } = {},
): Promise<Services> {
  if (!opts.create) requireExistingDatabase(config);
  const { openServices } = await import('../services.js');
  const services = await openServices(config);
  process.stderr.write(`parley: database ${describeDatabase(config)}\n`);
  return services;
}
