import type { Config } from '../config/config.js';
import type { Clock } from '../ids/clock.js';
import type { SnowflakeGenerator } from '../ids/snowflake.js';
import type { Db, Dialect } from '../storage/db.js';
import type { DerivedCache } from './derived-cache.js';
import type { EventRecorder, PeopleRecorder } from './events/recorder.js';
import type { PreviewScheduler } from './messages/previews.js';
import type { PushScheduler } from './push/scheduler.js';
import type { OidcClient } from './oidc/oidc-client.js';

/** D1: every absolute URL the server writes comes from one configured origin. */
export class Urls {
  private originValue: string;

  constructor(origin: string) {
    this.originValue = origin.replace(/\/+$/, '');
  }

  /** Set once the real port is known (PARLEY_PORT=0 without PARLEY_PUBLIC_URL). */
  setOrigin(origin: string): void {
    this.originValue = origin.replace(/\/+$/, '');
  }

  get origin(): string {
    return this.originValue;
  }
  get api(): string {
    return `${this.originValue}/api/v1`;
  }
  get gateway(): string {
    return `${this.originValue.replace(/^http/, 'ws')}/gateway`;
  }
  get cdn(): string {
    return `${this.originValue}/cdn`;
  }
  /** D20: the avatar of everyone who has not set one. */
  get defaultAvatar(): string {
    return `${this.cdn}/avatars/default.png`;
  }
}

/** What domain services need; built once in main (or per test) and passed in. */
export interface Domain {
  readonly db: Db;
  readonly dialect: Dialect;
  readonly ids: SnowflakeGenerator;
  readonly clock: Clock;
  readonly urls: Urls;
  readonly config: Config;
  readonly events: EventRecorder;
  /** D51: events for people only (never stored), and ephemeral ones (typing, presence) */
  readonly people: PeopleRecorder;
  /** rows every request needs (auth, access, recipients), kept while unchanged */
  readonly cache: DerivedCache;
  /** D71: link previews of people's messages, fetched after the send (absent: none) */
  readonly previews?: PreviewScheduler;
  /** D66: Web Push of DMs and mentions, planned after the send (absent: none) */
  readonly push?: PushScheduler;
  /** D69: the OpenID provider people sign in with (absent: none configured) */
  readonly oidc?: OidcClient;
}
