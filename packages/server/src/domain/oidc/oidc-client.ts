import type { Configuration } from 'openid-client';
import { loadOpenidClient } from '../../lazy-modules.js';
import type { Config } from '../../config/config.js';

/** D69: what the provider is asked for: the ID token (`openid`) and `preferred_username`. */
export const OIDC_SCOPE = 'openid profile';

/** D69: seconds each request to the provider may take (discovery, token, userinfo). */
const PROVIDER_TIMEOUT_S = 10;

/** D69: after a failed discovery, the next attempt waits at least this long. */
const RETRY_AFTER_FAILURE_MS = 5_000;

/**
 * D69: the server's OpenID Connect client (`openid-client`, which makes every check of the
 * protocol: issuer, signatures, audience, expiry, state, nonce, PKCE). Discovery starts with the
 * server, but a provider that is down then never stops Parley from starting: discovery is tried
 * again when a sign-in needs it (at most every RETRY_AFTER_FAILURE_MS), and until then sign-ins
 * end on the login page with "unavailable". The issuer is an operator's own endpoint, so D71's
 * guard against private addresses does not apply to it.
 */
export class OidcClient {
  readonly issuer: string;
  readonly name: string;
  private readonly clientId: string;
  private readonly clientSecret: string;
  private pending: Promise<Configuration> | undefined;
  private failedAt = -Infinity;
  private lastError: unknown;

  constructor(
    config: Config,
    private warn: (line: string) => void,
    private readonly retryAfterMs = RETRY_AFTER_FAILURE_MS,
  ) {
    if (!config.oidcIssuer || !config.oidcClientId || !config.oidcClientSecret)
      throw new Error('OidcClient needs PARLEY_OIDC_ISSUER, _CLIENT_ID and _CLIENT_SECRET');
    this.issuer = config.oidcIssuer;
    this.name = config.oidcName;
    this.clientId = config.oidcClientId;
    this.clientSecret = config.oidcClientSecret;
  }

  /** Where failures are told (the server's log once it exists). */
  setWarn(warn: (line: string) => void): void {
    this.warn = warn;
  }

  /** Starts discovery in the background (at server start); a failure is logged, not thrown. */
  warmUp(): void {
    this.configuration().catch(() => {
      /* logged by configuration() */
    });
  }

  /** The provider's discovered configuration; rejects while the provider cannot be reached. */
  configuration(): Promise<Configuration> {
    if (this.pending) return this.pending;
    if (Date.now() - this.failedAt < this.retryAfterMs)
      return Promise.reject(
        this.lastError instanceof Error ? this.lastError : new Error(String(this.lastError)),
      );
    const url = new URL(this.issuer);
    // D69: http:// is accepted only for a loopback issuer (config.ts refused any other).
    const insecure = url.protocol === 'http:';
    this.pending = loadOpenidClient()
      .then((client) =>
        client.discovery(url, this.clientId, this.clientSecret, undefined, {
          timeout: PROVIDER_TIMEOUT_S,
          ...(insecure ? { execute: [client.allowInsecureRequests] } : {}),
        }),
      )
      .catch((err: unknown) => {
        this.pending = undefined;
        this.failedAt = Date.now();
        this.lastError = err;
        this.warn(
          `OpenID provider ${this.issuer}: discovery failed (${describe(err)}); sign-in with it is unavailable until it answers — retried on the next sign-in`,
        );
        throw err;
      });
    return this.pending;
  }
}

/** One line about a provider failure (never a token or a secret: openid-client's messages). */
export function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    const code = (err as { code?: unknown }).code;
    return `${typeof code === 'string' ? `${code}: ` : ''}${err.message}${
      cause instanceof Error ? ` (${cause.message})` : ''
    }`;
  }
  return String(err);
}
