import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pg from 'pg';
import { loadConfig } from '../../src/config/config.js';
import { buildApp } from '../../src/http/app.js';
import { openServices } from '../../src/services.js';
import { ADMIN_TOKEN, dialect, PG_URL } from './harness.js';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../src/services.js';

/** One pino line as written: level (10 trace … 60 fatal), msg, and whatever else was logged. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- log lines are checked field by field
export type LogLine = { level: number; msg?: string; [k: string]: any };

export interface LoggedServer {
  app: FastifyInstance;
  services: Services;
  origin: string;
  port: number;
  /** every line logged so far (parsed), and their raw text */
  lines: LogLine[];
  raw(): string;
  close(): Promise<void>;
}

/**
 * A listening server like the harness's (same database choice), with pino writing every line
 * (`debug` and up) into memory — the log exactly as an operator would read it.
 */
export async function startLoggedServer(env: Record<string, string> = {}): Promise<LoggedServer> {
  let schema: string | undefined;
  let databaseUrl = 'sqlite::memory:';
  if (dialect === 'postgres') {
    schema = `t_${randomBytes(6).toString('hex')}`;
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`create schema ${schema}`);
    await c.end();
    databaseUrl = PG_URL;
  }
  const config = loadConfig({
    PARLEY_DATABASE_URL: databaseUrl,
    PARLEY_ADMIN_TOKEN: ADMIN_TOKEN,
    PARLEY_DATA_DIR: '/tmp/parley-test-unused',
    PARLEY_RATE_GLOBAL: 'off',
    PARLEY_RATE_MESSAGES: 'off',
    PARLEY_RATE_GATEWAY: 'off',
    ...env,
  });
  const services = await openServices(config, { ...(schema ? { schema } : {}), poolSize: 5 });
  let text = '';
  const lines: LogLine[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      const s = chunk.toString('utf8');
      text += s;
      for (const l of s.split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l) as LogLine);
      cb();
    },
  });
  const app = await buildApp(services, { logger: { level: 'debug', stream } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  services.domain.urls.setOrigin(`http://127.0.0.1:${port}`);
  return {
    app,
    services,
    origin: `http://127.0.0.1:${port}`,
    port,
    lines,
    raw: () => text,
    close: async () => {
      await app.close();
      await services.close();
      if (schema) {
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        await c.query(`drop schema ${schema} cascade`);
        await c.end();
      }
    },
  };
}
