import { expect } from 'vitest';
import { expectStatus, type Harness, type Reply } from './harness.js';

/** The public origin every harness uses (PARLEY_PUBLIC_URL). */
export const ORIGIN = 'http://parley.test';
export const PASSWORD = 'correct-horse-battery';

export interface Person {
  id: number;
  name: string;
  token: string;
}

/** D46: register through /app/v1 (the harness must allow it: open mode, or pass an invite). */
export async function register(
  h: Harness,
  name: string,
  o: { password?: string; invite?: string } = {},
): Promise<Person> {
  const r = await expectStatus(
    await h.people(undefined).post('/auth/register', {
      name,
      password: o.password ?? PASSWORD,
      ...(o.invite === undefined ? {} : { invite: o.invite }),
    }),
    201,
  );
  return { id: r.body.user.id, name: r.body.user.name, token: r.body.token };
}

/** D46: log in; the raw reply (status, cookie). */
export function login(
  h: Harness,
  name: string,
  password: string,
  o: { remoteAddress?: string; userAgent?: string } = {},
): Promise<Reply> {
  return h.request({
    method: 'POST',
    url: '/app/v1/auth/login',
    headers: {
      'content-type': 'application/json',
      ...(o.userAgent === undefined ? {} : { 'user-agent': o.userAgent }),
    },
    payload: JSON.stringify({ name, password }),
    ...(o.remoteAddress === undefined ? {} : { remoteAddress: o.remoteAddress }),
  });
}

/** The `parley_session` Set-Cookie line of a reply (there must be exactly one). */
export function sessionCookie(r: Reply): string {
  const raw = r.headers['set-cookie'];
  const lines = (Array.isArray(raw) ? raw : raw === undefined ? [] : [String(raw)]).filter((l) =>
    l.startsWith('parley_session='),
  );
  expect(lines).toHaveLength(1);
  return lines[0] as string;
}

/** A request authenticated by the session cookie only (D47), with an optional Origin. */
export function withCookie(
  h: Harness,
  token: string,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  o: { origin?: string; body?: unknown } = {},
): Promise<Reply> {
  return h.request({
    method,
    url: '/app/v1' + url,
    headers: {
      cookie: `parley_session=${token}`,
      ...(o.origin === undefined ? {} : { origin: o.origin }),
      ...(o.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(o.body === undefined ? {} : { payload: JSON.stringify(o.body) }),
  });
}

/** D49 invites, written directly (the invite routes are another area's). */
export async function makeInvite(
  h: Harness,
  guildId: number,
  code: string,
  o: { maxUses?: number | null; uses?: number; expiresAt?: number | null } = {},
): Promise<string> {
  await h.services.domain.db
    .insertInto('invites')
    .values({
      code,
      guild_id: guildId,
      creator_id: null,
      max_uses: o.maxUses ?? null,
      uses: o.uses ?? 0,
      expires_at: o.expiresAt ?? null,
      created_at: h.services.domain.clock.now(),
    })
    .execute();
  return code;
}
