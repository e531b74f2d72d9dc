import { signal } from '@preact/signals';
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { AuthConfig, OidcErrorCode, OidcLink, OidcLinkStart } from '@parley/protocol';
import { ApiError, del, describe, get, post } from '../lib/api.js';
import { Spinner } from '../ui/kit.js';
import { toast } from '../ui/toast.js';
import { day } from '../lib/time.js';

/**
 * D69: sign-in with the server's OpenID provider — the login page's "Sign in with …" button and
 * the messages of a failed sign-in (`?sso_error=`), and the settings section that links and
 * unlinks the account. The server says whether a provider is configured (GET /app/v1/auth/config).
 */

/** undefined: not asked yet; null: could not be read (then passwords, as before). */
export const authConfig = signal<AuthConfig | null | undefined>(undefined);
let asked = false;

function loadAuthConfig(): void {
  if (asked) return;
  asked = true;
  get<AuthConfig>('/app/v1/auth/config', { anonymous: true })
    .then((c) => (authConfig.value = c))
    .catch(() => (authConfig.value = null));
}

/** D69: what each `?sso_error=` code tells the person. */
const MESSAGES: Record<OidcErrorCode, (name: string) => string> = {
  denied: (n) => `Sign-in with ${n} was cancelled.`,
  provider_error: (n) => `${n} could not sign you in. Try again, or ask your administrator.`,
  state: () =>
    'That sign-in link is expired or was opened in another browser: start again from this page.',
  failed: (n) => `${n}’s answer could not be verified, so you were not signed in. Try again.`,
  unavailable: (n) => `${n} cannot be reached right now. Try again in a moment.`,
  registration_closed: () => 'This server does not create new accounts: ask its operator for one.',
  invite_required: () =>
    'A first sign-in here needs an invite: open the invite link someone gave you, then sign in.',
  invite_invalid: () => 'This invite is unknown, used up or expired: ask for a new one.',
  disabled: () => 'This account is disabled.',
  taken: (n) => `That ${n} account is already linked to another Parley account.`,
  already_linked: (n) => `Your account is already linked to a ${n} account: unlink it first.`,
};

export function ssoMessage(code: string, name: string): string {
  const m = (MESSAGES as Record<string, ((n: string) => string) | undefined>)[code];
  return m ? m(name) : `Sign-in with ${name} failed.`;
}

/** The `?sso_error=` of the current address, read once and then removed from it. */
function takeParam(name: string): string | null {
  const u = new URL(location.href);
  const v = u.searchParams.get(name);
  if (v !== null) {
    // Out of the address bar (a reload does not show it again); the router's path is left be.
    u.searchParams.delete(name);
    history.replaceState(history.state, '', u.pathname + u.search);
  }
  return v;
}

/**
 * D69: the login (or register, or invite) page's "Sign in with …" button, when the server has a
 * provider; an invite code is carried through the provider and joins its guild.
 */
export function SsoSignIn(props: { invite?: string | undefined }) {
  const [error] = useState(() => takeParam('sso_error'));
  useEffect(loadAuthConfig, []);
  const c = authConfig.value;
  const name = c?.oidc?.name ?? 'your organisation';
  return (
    <>
      {/* shown once the provider's name is known (no flash of a generic one) */}
      {error && c !== undefined && (
        <p class="banner error" role="alert" data-testid="sso-error">
          {ssoMessage(error, name)}
        </p>
      )}
      {c?.oidc && (
        <div class="sso">
          <a
            class="btn primary wide"
            href={`${c.oidc.startUrl}${props.invite ? `?invite=${encodeURIComponent(props.invite)}` : ''}`}
          >
            Sign in with {c.oidc.name}
          </a>
          {c.passwordLogin && <p class="muted center small">or with your name and password</p>}
        </div>
      )}
    </>
  );
}

/** D69: its children (the password forms) only while the server takes passwords. */
export function WithPasswords(props: { children: ComponentChildren }) {
  useEffect(loadAuthConfig, []);
  if (authConfig.value?.passwordLogin === false) return null;
  return <>{props.children}</>;
}

/**
 * The person's link as settings last read it (undefined: not read yet; null: no provider here).
 * The password card reads `hasPassword` from it: a person created by a first sign-in with the
 * provider has no password, so there is no current one to ask for.
 */
export const oidcLink = signal<OidcLink | null | undefined>(undefined);

/** D69: the settings section: linked or not, link, unlink (refused when it is the only way in). */
export function SsoSettings() {
  const link = oidcLink.value;
  const setLink = (l: OidcLink | null) => (oidcLink.value = l);
  const [error] = useState(() => takeParam('sso_error'));
  const [linked] = useState(() => takeParam('sso') === 'linked');
  const [busy, setBusy] = useState(false);
  const load = () => {
    get<OidcLink>('/app/v1/users/@me/oidc')
      .then(setLink)
      .catch((x) => {
        // 404: no provider on this server (the section is not shown)
        if (!(x instanceof ApiError && x.code === 'NOT_FOUND')) toast(describe(x));
        setLink(null);
      });
  };
  useEffect(() => {
    oidcLink.value = undefined;
    load();
  }, []);
  useEffect(() => {
    if (linked && link?.name) toast(`Linked to ${link.name}`, 'info');
  }, [linked, link?.name]);
  if (link === null) return null;
  if (link === undefined)
    return (
      <section class="card">
        <h2>Single sign-on</h2>
        <Spinner />
      </section>
    );
  const begin = async () => {
    setBusy(true);
    try {
      const r = await post<OidcLinkStart>('/app/v1/users/@me/oidc');
      location.assign(r.url);
    } catch (x) {
      toast(describe(x));
      setBusy(false);
    }
  };
  const unlink = async () => {
    setBusy(true);
    try {
      await del('/app/v1/users/@me/oidc');
      toast(`Unlinked from ${link.name}`, 'info');
      load();
    } catch (x) {
      toast(describe(x));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card" data-testid="sso-settings">
      <h2>Single sign-on</h2>
      {error && (
        <p class="banner error" role="alert">
          {ssoMessage(error, link.name)}
        </p>
      )}
      {link.linked ? (
        <>
          <p>
            Linked to <strong>{link.name}</strong>
            {link.linkedAt && ` since ${day(link.linkedAt)}`}: you can sign in with it.
          </p>
          <button type="button" class="btn" disabled={busy || !link.canUnlink} onClick={unlink}>
            Unlink {link.name}
          </button>
          {!link.canUnlink && (
            <p class="muted small">
              {link.name} is your only way to sign in here, so it cannot be unlinked.
            </p>
          )}
        </>
      ) : (
        <>
          <p class="muted small">
            Link your account to {link.name} to sign in with it instead of your password.
          </p>
          <button type="button" class="btn primary" disabled={busy} onClick={begin}>
            Link {link.name}
          </button>
        </>
      )}
    </section>
  );
}
