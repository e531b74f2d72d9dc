import { createHash, randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { SnowflakeGenerator } from '../../packages/server/src/ids/snowflake.js';

/**
 * People written straight into a server's SQLite file (like seed-messages.ts): `count` people
 * (users, a session token each — only its SHA-256 is stored, as domain/auth/session-token.ts
 * does — and a membership in `guildId`). Through the operator API this takes minutes at 10,000
 * (three requests per person); here, a second. Ids come from the server's own snowflake scheme on
 * a clock in the past, so they stay below the ones the server issues. Returns the tokens.
 * `guildId` may be a function of the person's index (people spread over several guilds), and
 * `namePrefix` names them `<prefix>-<i>` (names are unique among people, D46).
 */
export function seedPeople(
  dbFile: string,
  guildId: number | ((index: number) => number),
  count: number,
  namePrefix = 'person',
): string[] {
  const guildOf = typeof guildId === 'number' ? () => guildId : guildId;
  let t = Date.now() - count - 60_000;
  const ids = new SnowflakeGenerator(0, { now: () => t });
  const db = new Database(dbFile);
  const tokens: string[] = [];
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 10000');
    db.pragma('synchronous = OFF');
    const user = db.prepare(
      `insert into users (id, name, avatar, is_bot, password_hash, bot_count, created_at, disabled, name_key)
       values (?, ?, null, 0, null, 0, ?, 0, ?)`,
    );
    const session = db.prepare(
      `insert into user_sessions (token_hash, user_id, created_at, id, last_used_at, user_agent)
       values (?, ?, ?, ?, ?, 'bench')`,
    );
    const member = db.prepare(
      'insert into members (guild_id, user_id, joined_at) values (?, ?, ?)',
    );
    db.transaction(() => {
      for (let i = 0; i < count; i++) {
        t += 1;
        const id = ids.next();
        const name = `${namePrefix}-${i}`;
        user.run(id, name, t, name);
        const token = `pus_${randomBytes(32).toString('base64url')}`;
        const hash = createHash('sha256').update(token).digest('hex');
        session.run(hash, id, t, randomBytes(12).toString('base64url'), t);
        member.run(guildOf(i), id, t);
        tokens.push(token);
      }
    })();
  } finally {
    db.close();
  }
  return tokens;
}
