import { CONFIG_SPEC, type Config } from '../config/config.js';
import { describeDatabase } from './open.js';
import { printJson } from './output.js';

/** Variables whose values are never printed (D54: no secrets in output or logs). */
const SECRET = new Set(['PARLEY_ADMIN_TOKEN', 'PARLEY_TOKEN_SECRET', 'PARLEY_OIDC_CLIENT_SECRET']);

/** A setting's value as the operator writes it (the variable's own syntax). */
function shown(name: string, value: unknown, config: Config): string {
  if (value === undefined) return '(unset)';
  if (SECRET.has(name)) return '********';
  if (name === 'PARLEY_DATABASE_URL') return describeDatabase(config);
  if (value === null) return 'off';
  if (Array.isArray(value)) return value.join(',');
  if (typeof value === 'object') {
    // Issue 28: each object-valued setting printed in its own syntax (retention was shown as a
    // rate, "undefined/undefined").
    if ('delivered' in value && 'failed' in value) {
      const r = value as { delivered: number; failed: number };
      return `${r.delivered},${r.failed}`;
    }
    const r = value as { rate: number; burst: number };
    return `${r.rate}/${r.burst}`;
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * `parley config`: every setting in effect, where it came from (environment / .env, or the
 * default), secrets masked; the database as the CLI would open it. `--json` for scripts.
 */
export function printConfig(
  config: Config,
  env: Record<string, string | undefined>,
  json = false,
): void {
  const rows = CONFIG_SPEC.map((s) => ({
    name: s.name,
    shown: shown(s.name, (config as unknown as Record<string, unknown>)[s.key], config),
    from: env[s.name] !== undefined ? 'set' : 'default',
  }));
  if (json) {
    printJson(
      Object.fromEntries(
        rows.map((r) => [r.name, { value: r.shown === '(unset)' ? null : r.shown, from: r.from }]),
      ),
    );
    return;
  }
  const w = Math.max(...rows.map((r) => r.name.length));
  const v = Math.max(...rows.map((r) => r.shown.length));
  for (const r of rows)
    process.stdout.write(`${r.name.padEnd(w)}  ${r.shown.padEnd(v)}  ${r.from}\n`);
}
