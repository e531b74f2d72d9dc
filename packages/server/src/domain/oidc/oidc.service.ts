import { createHash, timingSafeEqual } from 'node:crypto';
import type { Configuration } from 'openid-client';
import { loadOpenidClient } from '../../lazy-modules.js';
import type { OidcErrorCode, OidcLink, User } from '@parley/protocol';
import { AppError, conflict, notFound } from '../../errors/app-error.js';
import { iso } from '../../ids/clock.js';
import { isUniqueViolation } from '../../storage/db.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { consumeInvite } from '../invites/consume.js';
import { joinGuild } from '../members/members.service.js';
import { createSession, insertPerson } from '../users/users.service.js';
import { avatarUrl } from '../views.js';
import { describe, OIDC_SCOPE, type OidcClient } from './oidc-client.js';
import { nameFromClaims, uniqueName } from './oidc-name.js';

/** D69: a sign-in (or link) must come back from the provider within this time. */
export const FLOW_TTL_MS = 10 * 60_000;

/** D69: the callback's path; the redirect URI registered at the provider is the public origin + this. */
export const CALLBACK_PATH = '/app/v1/auth/oidc/callback';

/**
 * D69: a sign-in or link that cannot finish. `code` goes to the web app (`?sso_error=`), which
 * shows its own message; `detail` is logged only.
 */
export class OidcFailure extends Error {
  override name = 'OidcFailure';
  constructor(
    readonly code: OidcErrorCode,
    readonly detail: string,
    /** the flow was a link from settings (its page shows the error, not the login page) */
    readonly linking = false,
  ) {
    super(`${code}: ${detail}`);
  }
}

const hashState = (state: string): string => createHash('sha256').update(state).digest('hex');

/** D69: the provider's client, or 404 when the server has none configured. */
export function requireOidc(d: Domain): OidcClient {
  if (!d.oidc) throw notFound('sign-in provider: this server has no OpenID provider configured');
  return d.oidc;
}

async function providerConfig(oidc: OidcClient, linking: boolean): Promise<Configuration> {
  try {
    return await oidc.configuration();
  } catch (err) {
    throw new OidcFailure('unavailable', describe(err), linking);
  }
}

/**
 * D69: begin a sign-in (or, with `linkUserId`, a person's link): a fresh state, nonce and PKCE
 * verifier (S256) are kept server-side for FLOW_TTL_MS; the answer is the provider's
 * authorization URL and the state, which the route also puts in a short-lived HttpOnly cookie so
 * that only the browser that began the flow can finish it.
 */
export async function startFlow(
  d: Domain,
  oidc: OidcClient,
  opts: { invite?: string | undefined; linkUserId?: number | undefined },
): Promise<{ url: string; state: string }> {
  const config = await providerConfig(oidc, opts.linkUserId !== undefined);
  const client = await loadOpenidClient();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const verifier = client.randomPKCECodeVerifier();
  const challenge = await client.calculatePKCECodeChallenge(verifier);
  const now = d.clock.now();
  await d.db
    .deleteFrom('oidc_flows')
    .where('created_at', '<=', now - FLOW_TTL_MS)
    .execute();
  await d.db
    .insertInto('oidc_flows')
    .values({
      state_hash: hashState(state),
      nonce,
      code_verifier: verifier,
      link_user_id: opts.linkUserId ?? null,
      invite: opts.invite ?? null,
      created_at: now,
    })
    .execute();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: d.urls.origin + CALLBACK_PATH,
    scope: OIDC_SCOPE,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { url: url.href, state };
}

/** What a finished flow leads to. */
export type FlowResult =
  | { kind: 'signin'; user: User; token: string; /** where the web app goes */ to: string }
  | { kind: 'link'; to: string };

/**
 * D69: the provider's redirect back. In order: the provider's own error (`denied`, else
 * `provider_error`); the state — it must equal the cookie of the browser that began the flow
 * and name a flow begun within FLOW_TTL_MS, which is used up here, so a replayed callback finds
 * nothing (`state`); then openid-client exchanges the code with the PKCE verifier and checks the
 * ID token (signature, issuer, audience, expiry, and the nonce of this flow) — any failure is
 * `failed`. The subject then signs in, is created, or is linked.
 */
export async function finishFlow(
  d: Domain,
  oidc: OidcClient,
  opts: {
    query: Record<string, string | undefined>;
    cookieState: string | undefined;
    userAgent: string | undefined;
  },
): Promise<FlowResult> {
  const q = opts.query;
  const state = q['state'];
  // Which flow this is, when the state is known, decides where errors are shown.
  const flow =
    state === undefined
      ? undefined
      : await d.db
          .selectFrom('oidc_flows')
          .selectAll()
          .where('state_hash', '=', hashState(state))
          .executeTakeFirst();
  const linking = flow?.link_user_id != null;
  if (q['error'] !== undefined) {
    if (flow)
      await d.db.deleteFrom('oidc_flows').where('state_hash', '=', flow.state_hash).execute();
    throw new OidcFailure(
      q['error'] === 'access_denied' ? 'denied' : 'provider_error',
      `the provider answered ${q['error']}${q['error_description'] ? `: ${q['error_description']}` : ''}`,
      linking,
    );
  }
  if (state === undefined || opts.cookieState === undefined)
    throw new OidcFailure('state', 'no state, or no flow cookie (another browser?)', linking);
  const a = Buffer.from(state);
  const b = Buffer.from(opts.cookieState);
  if (a.length !== b.length || !timingSafeEqual(a, b))
    throw new OidcFailure('state', 'the state does not match this browser’s flow cookie', linking);
  if (!flow) throw new OidcFailure('state', 'unknown or already used state', linking);
  // Used once: of two callbacks with one state, only the one that deletes the row goes on.
  const claimed = await d.db
    .deleteFrom('oidc_flows')
    .where('state_hash', '=', flow.state_hash)
    .executeTakeFirst();
  if (claimed.numDeletedRows === 0n)
    throw new OidcFailure('state', 'the state was used by another callback', linking);
  if (Number(flow.created_at) <= d.clock.now() - FLOW_TTL_MS)
    throw new OidcFailure('state', 'the sign-in took longer than 10 minutes', linking);

  const config = await providerConfig(oidc, linking);
  const client = await loadOpenidClient();
  const callbackUrl = new URL(d.urls.origin + CALLBACK_PATH);
  for (const [k, v] of Object.entries(q)) if (v !== undefined) callbackUrl.searchParams.set(k, v);
  let claims: Record<string, unknown>;
  let subject: string;
  try {
    const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: flow.code_verifier,
      expectedState: state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
    });
    const idClaims = tokens.claims();
    if (!idClaims) throw new Error('no ID token');
    subject = idClaims.sub;
    claims = { ...idClaims };
    // Name claims often come only from the userinfo endpoint (with `sub` checked to match).
    if (!linking && typeof claims['preferred_username'] !== 'string') {
      const info = await client
        .fetchUserInfo(config, tokens.access_token, subject)
        .catch(() => undefined);
      if (info) claims = { ...info, ...claims };
    }
  } catch (err) {
    throw new OidcFailure('failed', describe(err), linking);
  }

  if (flow.link_user_id != null) {
    await linkSubject(d, oidc, Number(flow.link_user_id), subject);
    return { kind: 'link', to: '/settings?sso=linked' };
  }
  return signInSubject(d, oidc, subject, claims, flow.invite ?? undefined, opts.userAgent);
}

async function linkedUser(d: Domain, oidc: OidcClient, subject: string) {
  return d.db
    .selectFrom('oidc_links')
    .innerJoin('users', 'users.id', 'oidc_links.user_id')
    .select(['users.id', 'users.name', 'users.avatar', 'users.disabled'])
    .where('oidc_links.issuer', '=', oidc.issuer)
    .where('oidc_links.subject', '=', subject)
    .executeTakeFirst();
}

/**
 * D69: the subject signs in. Linked → a session of that person (a disabled one → `disabled`).
 * Unknown → a new person, as PARLEY_REGISTRATION allows (D46: `closed` → `registration_closed`;
 * `invite` needs the invite carried through the flow → `invite_required`, and a bad one →
 * `invite_invalid`), named from the claims and made unique, linked, joined to the invite's
 * guild, with a first session — all in one transaction.
 */
async function signInSubject(
  d: Domain,
  oidc: OidcClient,
  subject: string,
  claims: Record<string, unknown>,
  invite: string | undefined,
  userAgent: string | undefined,
): Promise<FlowResult> {
  const known = await linkedUser(d, oidc, subject);
  if (known) {
    if (known.disabled === 1) throw new OidcFailure('disabled', `person ${known.id} is disabled`);
    const { token } = await createSession(d, Number(known.id), { userAgent });
    return {
      kind: 'signin',
      user: {
        id: Number(known.id),
        name: known.name,
        avatar: avatarUrl(d.urls, known.avatar),
        isBot: false,
      },
      token,
      // An invite brought along by someone who has an account: its page offers to join.
      to: invite === undefined ? '/' : `/invite/${encodeURIComponent(invite)}`,
    };
  }
  const mode = d.config.registration;
  if (mode === 'closed') throw new OidcFailure('registration_closed', 'registration is closed');
  if (mode === 'invite' && invite === undefined)
    throw new OidcFailure('invite_required', 'a first sign-in needs an invite here');
  const base = nameFromClaims(claims);
  for (let attempt = 0; ; attempt++) {
    const name = await uniqueName(d.db, base, attempt);
    try {
      return await d.db.transaction().execute(async (trx) => {
        let guildId: number | undefined;
        const user = await insertPerson(d, trx, { name, avatar: null, passwordHash: null });
        await trx
          .insertInto('oidc_links')
          .values({
            issuer: oidc.issuer,
            subject,
            user_id: user.id,
            created_at: d.clock.now(),
          })
          .execute();
        if (invite !== undefined) {
          try {
            guildId = await consumeInvite(trx, invite, d.clock.now());
          } catch (err) {
            if (err instanceof AppError && err.code === 'NOT_FOUND')
              throw new OidcFailure('invite_invalid', 'unknown, used up or expired invite');
            throw err;
          }
          await joinGuild(trx, d, guildId, user.id);
        }
        const { token } = await createSession(d, user.id, { userAgent, trx });
        return { kind: 'signin', user, token, to: guildId === undefined ? '/' : `/g/${guildId}` };
      });
    } catch (err) {
      if (attempt >= 3) throw err;
      // A concurrent first sign-in of the same subject won: sign in to its person.
      if (isUniqueViolation(err) && (await linkedUser(d, oidc, subject)))
        return signInSubject(d, oidc, subject, claims, invite, userAgent);
      // The name was taken meanwhile (409 from insertPerson): the next candidate.
      if (err instanceof AppError && err.code === 'CONFLICT') continue;
      throw err;
    }
  }
}

/**
 * D69: link the subject to the person who began the flow from settings. The subject linked to
 * someone else → `taken`; the person already linked to another subject → `already_linked`.
 */
async function linkSubject(d: Domain, oidc: OidcClient, userId: number, subject: string) {
  const owner = await linkedUser(d, oidc, subject);
  if (owner && Number(owner.id) === userId) return;
  if (owner) throw new OidcFailure('taken', `subject linked to person ${owner.id}`, true);
  const mine = await d.db
    .selectFrom('oidc_links')
    .select('subject')
    .where('user_id', '=', userId)
    .where('issuer', '=', oidc.issuer)
    .executeTakeFirst();
  if (mine) throw new OidcFailure('already_linked', 'the person is linked already', true);
  try {
    await d.db
      .insertInto('oidc_links')
      .values({ issuer: oidc.issuer, subject, user_id: userId, created_at: d.clock.now() })
      .execute();
  } catch (err) {
    if (isUniqueViolation(err)) throw new OidcFailure('taken', 'linked concurrently', true);
    throw err;
  }
}

async function hasPassword(d: Domain, userId: number): Promise<boolean> {
  const row = await d.db
    .selectFrom('users')
    .select('password_hash')
    .where('id', '=', userId)
    .executeTakeFirst();
  return row?.password_hash != null;
}

function unlinkBlocker(d: Domain, password: boolean): string | undefined {
  if (!d.config.passwordLogin)
    return 'Password login is off on this server: the provider is the only way to sign in';
  if (!password)
    return 'This account has no password: unlinking would leave no way to sign in (ask the operator to set a password first)';
  return undefined;
}

/** D69: the person's link to the provider, for settings. */
export async function linkState(d: Domain, oidc: OidcClient, p: Principal): Promise<OidcLink> {
  const row = await d.db
    .selectFrom('oidc_links')
    .select('created_at')
    .where('user_id', '=', p.userId)
    .where('issuer', '=', oidc.issuer)
    .executeTakeFirst();
  const password = await hasPassword(d, p.userId);
  return {
    name: oidc.name,
    linked: row !== undefined,
    linkedAt: row ? iso(Number(row.created_at)) : null,
    canUnlink: row !== undefined && unlinkBlocker(d, password) === undefined,
    hasPassword: password,
  };
}

/**
 * D69: unlink the person's account from the provider. Not linked → 404; when it would leave no
 * way to sign in (no password, or PARLEY_PASSWORD_LOGIN=false) → 409.
 */
export async function unlink(d: Domain, oidc: OidcClient, p: Principal): Promise<void> {
  const blocker = unlinkBlocker(d, await hasPassword(d, p.userId));
  const linked = await d.db
    .selectFrom('oidc_links')
    .select('subject')
    .where('user_id', '=', p.userId)
    .where('issuer', '=', oidc.issuer)
    .executeTakeFirst();
  if (!linked) throw notFound('link: this account is not linked to the provider');
  if (blocker !== undefined) throw conflict(blocker);
  await d.db
    .deleteFrom('oidc_links')
    .where('user_id', '=', p.userId)
    .where('issuer', '=', oidc.issuer)
    .execute();
}
