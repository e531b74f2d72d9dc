import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/**
 * D69 tests: a real OpenID provider (panva's `oidc-provider`, certified) on a loopback port, with
 * one confidential client registered for Parley. Its development login and consent pages (any
 * login, any password; the login becomes the subject) are what a test or a browser fills in.
 * `usernames` gives a subject its `preferred_username` (default: the login itself).
 */
export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** the Parley settings that point at it */
  env: Record<string, string>;
  usernames: Map<string, string>;
  close(): Promise<void>;
}

export async function startIdp(redirectUris: string[], onPort = 0): Promise<TestIdp> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(onPort, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = 'parley-test';
  const clientSecret = 'parley-test-secret-0123456789abcdef';
  const usernames = new Map<string, string>();
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        // openid-client's default for a client with a secret
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    claims: { openid: ['sub'], profile: ['preferred_username', 'name'] },
    findAccount: (_ctx, sub) => ({
      accountId: sub,
      claims: () => ({ sub, preferred_username: usernames.get(sub) ?? sub }),
    }),
    pkce: { required: () => true },
    cookies: { keys: ['parley-test-cookie-key-0123456789'] },
    features: { devInteractions: { enabled: true } },
  });
  // The provider runs on plain http on loopback (D69 allows it for development and tests).
  provider.on('server_error', (_ctx, err) => process.stderr.write(`test idp: ${String(err)}\n`));
  server.on('request', provider.callback());
  return {
    issuer,
    clientId,
    clientSecret,
    usernames,
    env: {
      PARLEY_OIDC_ISSUER: issuer,
      PARLEY_OIDC_CLIENT_ID: clientId,
      PARLEY_OIDC_CLIENT_SECRET: clientSecret,
      PARLEY_OIDC_NAME: 'Test IdP',
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A browser's cookies for one site (name → value), from Set-Cookie headers. */
export class CookieJar {
  readonly cookies = new Map<string, string>();

  take(setCookie: string | string[] | number | undefined): void {
    const list = Array.isArray(setCookie)
      ? setCookie
      : setCookie === undefined
        ? []
        : [String(setCookie)];
    for (const c of list) {
      const [pair = ''] = c.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(c) || /max-age=0\b/i.test(c) || value === '')
        this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * Walks the provider's pages as a browser would: follows its redirects and submits its login
 * (with `login`) and consent forms, until it redirects off the provider — to Parley's callback —
 * and answers that URL. `abort` presses "Cancel" on the login page instead (access_denied).
 */
export async function throughProvider(
  authorizeUrl: string,
  login: string,
  opts: { abort?: boolean; jar?: CookieJar } = {},
): Promise<string> {
  const jar = opts.jar ?? new CookieJar();
  const origin = new URL(authorizeUrl).origin;
  let next: { url: string; form?: URLSearchParams } = { url: authorizeUrl };
  for (let step = 0; step < 20; step++) {
    const res = await fetch(next.url, {
      method: next.form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: jar.header(),
        ...(next.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(next.form ? { body: next.form.toString() } : {}),
    });
    jar.take(res.headers.getSetCookie());
    if (res.status >= 300 && res.status < 400) {
      const to = new URL(res.headers.get('location') ?? '', next.url).href;
      if (!to.startsWith(origin)) return to;
      next = { url: to };
      continue;
    }
    const html = await res.text();
    if (res.status !== 200)
      throw new Error(`provider answered ${res.status}: ${html.slice(0, 500)}`);
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1];
    if (!action || !prompt)
      throw new Error(`no form on the provider's page: ${html.slice(0, 500)}`);
    const target = new URL(action.replace(/&amp;/g, '&'), next.url).href;
    if (prompt === 'login' && opts.abort) {
      next = { url: `${target}/abort` };
      continue;
    }
    const form = new URLSearchParams({ prompt });
    if (prompt === 'login') {
      form.set('login', login);
      form.set('password', 'any password');
    }
    next = { url: target, form };
  }
  throw new Error('the provider never redirected back');
}
