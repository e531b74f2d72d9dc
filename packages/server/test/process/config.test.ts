import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, isListening, runParley, tempDir } from '../helpers/process.js';

// Acceptance 9 (issue 2), D42: bad configuration stops start-up with exactly one clear line on
// stderr naming the variable — no stack trace — and a non-zero exit, before anything is created.

const CASES: Array<[variable: string, value: string]> = [
  ['PARLEY_PORT', 'abc'],
  ['PARLEY_PORT', '70000'],
  ['PARLEY_RATE_GLOBAL', 'fast'],
  ['PARLEY_DATABASE_URL', 'mysql://x'],
  ['PARLEY_DATABASE_URL', 'postgres://'],
  ['PARLEY_DATABASE_URL', 'sqlite:'], // no file: would silently be a throw-away database
  ['PARLEY_LOG_LEVEL', 'loud'],
  ['PARLEY_ADMIN_TOKEN', 'short'],
  ['PARLEY_WEBHOOK_RETRY_S', '5,,30'],
  ['PARLEY_TLS_CERT', '/tmp/cert.pem'], // without PARLEY_TLS_KEY
  ['PARLEY_OIDC_ISSUER', 'http://sso.example.com'], // D69: https, or http only on loopback
  ['PARLEY_PASSWORD_LOGIN', 'false'], // D69: without a provider nobody could sign in
];

/** No stack frames, no file paths of ours, no error class dumps. */
const STACK = /\n\s+at |\bat .*:\d+:\d+|node:internal|\.ts:\d+|Error: .*\n/;

function expectOneLine(stderr: string, variable: string): void {
  expect(stderr.endsWith('\n'), JSON.stringify(stderr)).toBe(true);
  const lines = stderr.split('\n').slice(0, -1);
  expect(lines, JSON.stringify(stderr)).toHaveLength(1);
  const line = lines[0] ?? '';
  expect(line).toContain(variable);
  expect(line.length).toBeLessThan(300);
  expect(stderr).not.toMatch(STACK);
}

describe('bad configuration: one line on stderr, non-zero exit (D42)', () => {
  const tmp = tempDir();
  afterAll(() => tmp.remove());

  // Two at a time: each child compiles the TypeScript with tsx, and the machine is shared.
  const batches: Array<typeof CASES> = [];
  for (let i = 0; i < CASES.length; i += 2) batches.push(CASES.slice(i, i + 2));

  it.each(batches.map((b) => [b.map(([k, v]) => `${k}=${v}`).join(', '), b] as const))(
    '%s',
    async (_label, batch) => {
      await Promise.all(
        batch.map(async ([variable, value], i) => {
          const dataDir = path.join(tmp.path, `${variable}-${i}-${value.replace(/\W/g, '_')}`);
          const port = await freePort();
          const r = await runParley(['serve'], {
            PARLEY_DATA_DIR: dataDir,
            PARLEY_PORT: String(port),
            [variable]: value,
          });
          expect(r.signal).toBeNull();
          expect(r.code, `${variable}=${value}: ${r.stderr}`).not.toBe(0);
          expect(r.code).not.toBeNull();
          expectOneLine(r.stderr, variable);
          // It stopped before doing anything: no banner, no data directory, nothing listening.
          expect(r.stdout).not.toMatch(/Parley is running/);
          expect(existsSync(dataDir)).toBe(false);
          if (variable !== 'PARLEY_PORT') expect(await isListening(port)).toBe(false);
        }),
      );
    },
    60_000,
  );

  it('the admin CLI reports bad arguments the same way: one line, exit 1', async () => {
    const dataDir = path.join(tmp.path, 'cli-args');
    const env = { PARLEY_DATA_DIR: dataDir };
    const [badId, badConfig] = await Promise.all([
      runParley(['admin', 'bot', 'reset-token', '01'], env),
      runParley(['admin', 'bot', 'reset-token', '5'], { ...env, PARLEY_LOG_LEVEL: 'loud' }),
    ]);
    expect(badId.code).toBe(1);
    expectOneLine(badId.stderr, 'botId');
    expect(badId.stderr).toMatch(/VALIDATION_ERROR/);
    expect(badConfig.code).toBe(1);
    expectOneLine(badConfig.stderr, 'PARLEY_LOG_LEVEL');
  }, 60_000);
});
