import { Type, type Static } from 'typebox';
import { Timestamp } from './rest.js';

/**
 * D69: sign-in with the server's OpenID Connect provider. What the login page needs to know
 * (public), and a person's link to the provider (settings).
 */

/** D46/D69: `GET /app/v1/auth/config` — how people sign in on this server (no session needed). */
export const AuthConfig = Type.Object(
  {
    /** D69: false → password login and registration answer 403 */
    passwordLogin: Type.Boolean(),
    /** D46: PARLEY_REGISTRATION */
    registration: Type.Union([
      Type.Literal('invite'),
      Type.Literal('open'),
      Type.Literal('closed'),
    ]),
    /** D69: the OpenID provider, when one is configured: its name for "Sign in with …" */
    oidc: Type.Union([
      Type.Object(
        {
          name: Type.String(),
          /** starts the sign-in (a browser navigation; `?invite=CODE` carries an invite) */
          startUrl: Type.String(),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
  },
  { title: 'AuthConfig', additionalProperties: false },
);
export type AuthConfig = Static<typeof AuthConfig>;

/** D69: `GET /app/v1/users/@me/oidc` — whether the person's account is linked to the provider. */
export const OidcLink = Type.Object(
  {
    /** the provider's name (PARLEY_OIDC_NAME) */
    name: Type.String(),
    linked: Type.Boolean(),
    /** when it was linked (null: not linked) */
    linkedAt: Type.Union([Timestamp, Type.Null()]),
    /** false when unlinking would leave no way to sign in (no password, or passwords off) */
    canUnlink: Type.Boolean(),
    /** whether the person has a password (false: created by a first sign-in with the provider;
     * only the server's operator can set one — the settings page says so instead of asking for a
     * current password there is none of) */
    hasPassword: Type.Boolean(),
  },
  { title: 'OidcLink', additionalProperties: false },
);
export type OidcLink = Static<typeof OidcLink>;

/** D69: `POST /app/v1/users/@me/oidc` — where the browser goes to link the account. */
export const OidcLinkStart = Type.Object(
  { url: Type.String({ description: "the provider's authorization URL: navigate there" }) },
  { title: 'OidcLinkStart', additionalProperties: false },
);
export type OidcLinkStart = Static<typeof OidcLinkStart>;

/**
 * D69: the codes the callback puts in `?sso_error=` on the web app's login (or settings) page
 * when a sign-in or link fails; the page shows each its own message.
 */
export const OIDC_ERRORS = [
  'denied',
  'provider_error',
  'state',
  'failed',
  'unavailable',
  'registration_closed',
  'invite_required',
  'invite_invalid',
  'disabled',
  'taken',
  'already_linked',
] as const;
export type OidcErrorCode = (typeof OIDC_ERRORS)[number];
