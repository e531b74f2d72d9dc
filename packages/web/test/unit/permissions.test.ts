import { Permission } from '@parley/protocol';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/lib/api.js';
import {
  explain,
  mayActOn,
  nameColor,
  PERMISSION_LABELS,
  rankOf,
} from '../../src/lib/permissions.js';
import type { Guild, MemberSummary } from '../../src/lib/types.js';
import { initial, reduce, type State } from '../../src/state/reduce.js';

// The web app's reading of D57–D58 (issue 23), without a browser: ranks, name colours, who sees
// the member menu, the plain-words refusals, and the member list kept current by
// GUILD_MEMBER_UPDATE.

const OWNER = 1;
const role = (id: number, position: number, color: number | null, permissions = 0) => ({
  id,
  name: `r${id}`,
  permissions,
  position,
  color,
  mentionable: false,
});
const guild = (myPermissions: number): Guild => ({
  id: 100,
  name: 'g',
  ownerId: OWNER,
  roles: [
    role(100, 0, null, 3),
    role(101, 1, 0x00ff00), // regulars
    role(102, 2, null), // helpers (no colour)
    role(103, 3, 0xff8800, Permission.KICK_MEMBERS), // moderators
  ],
  channels: [],
  bots: [],
  myPermissions,
});

describe('D57/D58 in the web app', () => {
  it('every bit has a plain name and an explanation', () => {
    for (const k of Object.keys(Permission) as Array<keyof typeof Permission>) {
      expect(PERMISSION_LABELS[k].label.length).toBeGreaterThan(3);
      expect(PERMISSION_LABELS[k].help).toMatch(/\.$/);
    }
  });

  it('rank is the highest role position; the owner outranks everyone', () => {
    const g = guild(0);
    expect(rankOf(g, 5, [])).toBe(0);
    expect(rankOf(g, 5, [101, 103])).toBe(3);
    expect(rankOf(g, OWNER, [])).toBe(Number.POSITIVE_INFINITY);
  });

  it("a name's colour is its highest coloured role's", () => {
    const g = guild(0);
    expect(nameColor(g, [101, 102])).toBe('#00ff00'); // helpers has no colour: regulars shows
    expect(nameColor(g, [101, 103])).toBe('#ff8800');
    expect(nameColor(g, [102])).toBeUndefined();
    expect(nameColor(g, undefined)).toBeUndefined();
  });

  it('the member menu: the bit and a higher rank, never the owner or oneself', () => {
    const g = guild(Permission.KICK_MEMBERS);
    const mod = { id: 7, roles: [103] };
    expect(mayActOn(g, mod, { id: 8, roles: [101] }, Permission.KICK_MEMBERS)).toBe(true);
    expect(mayActOn(g, mod, { id: 8, roles: [103] }, Permission.KICK_MEMBERS)).toBe(false);
    expect(mayActOn(g, mod, { id: 8, roles: [101] }, Permission.BAN_MEMBERS)).toBe(false);
    expect(mayActOn(g, mod, { id: OWNER, roles: [] }, Permission.KICK_MEMBERS)).toBe(false);
    expect(mayActOn(g, mod, { id: 7, roles: [103] }, Permission.KICK_MEMBERS)).toBe(false);
    // ADMINISTRATOR grants the bit, not rank
    const admin = guild(Permission.ADMINISTRATOR);
    expect(mayActOn(admin, { id: 7, roles: [102] }, { id: 8, roles: [101] }, 256)).toBe(true);
    expect(mayActOn(admin, { id: 7, roles: [102] }, { id: 8, roles: [103] }, 256)).toBe(false);
  });

  it('refusals in plain words: rank (members, roles), a missing bit by its label', () => {
    const e = (message: string) => new ApiError(403, 'FORBIDDEN', message);
    expect(
      explain(
        e(
          'This member is not ranked below you: you may act only on members whose highest role is below yours (D58)',
        ),
      ),
    ).toMatch(/^You can only do this to members whose highest role is below yours/);
    expect(
      explain(
        e(
          'Role "mods" is not below your highest role: you may act only on roles ranked below your own (D58)',
        ),
      ),
    ).toMatch(/^You can only change roles that are below your own highest role/);
    expect(explain(e('Missing permission: KICK_MEMBERS, BAN_MEMBERS'))).toBe(
      'You need the “Kick members” and “Ban members” permissions for this.',
    );
    expect(explain(new ApiError(409, 'CONFLICT', 'The owner cannot be kicked'))).toBe(
      'The owner cannot be kicked, banned or timed out.',
    );
  });

  it('GUILD_MEMBER_UPDATE keeps the member list current: roles and time-out (ended: gone)', () => {
    const user = { id: 8, name: 'max', avatar: '' };
    const entry: MemberSummary = { user, joinedAt: '2026-01-01T00:00:00.000Z', roles: [101] };
    let s: State = reduce(initial, { type: 'MEMBERS', d: { guildId: 100, members: [entry] } });
    const until = '2026-12-01T00:00:00.000Z';
    s = reduce(s, {
      type: 'GUILD_MEMBER_UPDATE',
      d: { guildId: 100, user, roles: [101, 103], timeoutUntil: until },
    });
    expect(s.members.get(100)).toEqual([{ ...entry, roles: [101, 103], timeoutUntil: until }]);
    s = reduce(s, { type: 'GUILD_MEMBER_UPDATE', d: { guildId: 100, user, roles: [] } });
    expect(s.members.get(100)).toEqual([{ ...entry, roles: [] }]);
    // someone the list does not hold: nothing changes
    const same = reduce(s, {
      type: 'GUILD_MEMBER_UPDATE',
      d: { guildId: 100, user: { ...user, id: 9 }, roles: [] },
    });
    expect(same).toBe(s);
  });
});
