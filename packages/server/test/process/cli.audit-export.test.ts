import { existsSync } from 'node:fs';
import path from 'node:path';
import { unzipSync } from 'fflate';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { openServices } from '../../src/services.js';
import { runParley, tempDir } from '../helpers/process.js';

// Issue 28: `parley admin guild export <id>` writes the guild's zip (parley-export/1), and
// `parley admin audit` (D60: the operator's own log; the same command as `audit-log`) shows it.

describe('parley admin guild export and parley admin audit', () => {
  const data = tempDir('parley-audit-export-');
  const env = { PARLEY_DATA_DIR: data.path };
  let guildId = 0;

  beforeAll(async () => {
    const s = await openServices(loadConfig(env));
    try {
      const { createUser } = await import('../../src/domain/users/users.service.js');
      const { createGuild } = await import('../../src/domain/guilds/guilds.service.js');
      const owner = await createUser(s.domain, { name: 'owner' });
      guildId = (await createGuild(s.domain, { name: 'Audited', ownerId: owner.id })).id;
    } finally {
      await s.close();
    }
  });
  afterAll(() => data.remove());

  it('exports the guild to a zip, and the export is in the operator’s audit log', async () => {
    const out = path.join(data.path, 'g.zip');
    const r = await runParley(
      ['admin', 'guild', 'export', String(guildId), '--out', out],
      env,
      90_000,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`guild ${guildId} exported to ${out} \\(\\d+ bytes\\)`));
    expect(existsSync(out)).toBe(true);
    const files = unzipSync(new Uint8Array(readFileSync(out)));
    expect(Object.keys(files).sort()).toEqual(
      ['guild.json', 'manifest.json', 'members.jsonl', 'messages.jsonl'].sort(),
    );
    expect(JSON.parse(Buffer.from(files['guild.json']!).toString())).toMatchObject({
      id: guildId,
      name: 'Audited',
    });
    // A second export to the same file is refused (nothing overwritten).
    const again = await runParley(
      ['admin', 'guild', 'export', String(guildId), '--out', out],
      env,
      90_000,
    );
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/exists; choose a new file name/);

    const audit = await runParley(['admin', 'audit', '--json'], env, 90_000);
    expect(audit.code, audit.stderr).toBe(0);
    const log = JSON.parse(audit.stdout);
    expect(log.entries.some((e: { targetId: number | null }) => e.targetId === guildId)).toBe(true);
    const table = await runParley(['admin', 'audit'], env, 90_000);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^ID\s+CREATEDAT\s+ACTOR\s+ACTION/m);
    expect(table.stdout).toContain(String(guildId));
  }, 240_000);
});
