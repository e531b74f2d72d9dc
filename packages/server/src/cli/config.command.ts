import { CONFIG_SPEC, type Config } from '../config/config.js';
import { describeDatabase } from './open.js';

/** Variables whose values are never printed (D54: no secrets in output or logs). */
const SECRET = new Set(['PARLEY_ADMIN_TOKEN', 'PARLEY_TOKEN_SECRET']);

/**
 * `parley config`: every setting in effect, where it came from (environment / .env, or the
 * default), secrets masked; the database as the CLI would open it.
 */
export function printConfig(config: Config, env: Record<string, string | undefined>): void {
  const rows = CONFIG_SPEC.map((s) => {
    const value = (config as unknown as Record<string, unknown>)[s.key];
    let shown: string;
    if (value === undefined) shown = '(unset)';
    else if (SECRET.has(s.name)) shown = '********';
    else if (s.name === 'PARLEY_DATABASE_URL') shown = describeDatabase(config);
    else if (value === null) shown = 'off';
    else if (Array.isArray(value)) shown = value.join(',');
    else if (typeof value === 'object') {
      const r = value as { rate: number; burst: number };
      shown = `${r.rate}/${r.burst}`;
    } else shown = typeof value === 'string' ? value : JSON.stringify(value);
    return { name: s.name, shown, from: env[s.name] !== undefined ? 'set' : 'default' };
  });
  const w = Math.max(...rows.map((r) => r.name.length));
  const v = Math.max(...rows.map((r) => r.shown.length));
  for (const r of rows)
    process.stdout.write(`${r.name.padEnd(w)}  ${r.shown.padEnd(v)}  ${r.from}\n`);
}
