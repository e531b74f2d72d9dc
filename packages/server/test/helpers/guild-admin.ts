import type { PeopleDispatch } from '../../src/domain/events/recorder.js';
import { expectStatus, makeUser, type Harness, type Reply } from './harness.js';

/** A person calling the people's API `/app/v1` with a bearer session token (D45). */
export interface AppCaller {
  get(url: string): Promise<Reply>;
  delete(url: string): Promise<Reply>;
  post(url: string, body?: unknown): Promise<Reply>;
  put(url: string, body?: unknown): Promise<Reply>;
  patch(url: string, body?: unknown): Promise<Reply>;
}

export function appAs(h: Harness, token: string | undefined): AppCaller {
  const headers = (): Record<string, string> =>
    token === undefined ? {} : { authorization: `Bearer ${token}` };
  const withBody = (method: 'POST' | 'PUT' | 'PATCH', url: string, body: unknown) =>
    h.request({
      method,
      url: '/app/v1' + url,
      headers: {
        ...headers(),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  return {
    get: (url) => h.request({ method: 'GET', url: '/app/v1' + url, headers: headers() }),
    delete: (url) => h.request({ method: 'DELETE', url: '/app/v1' + url, headers: headers() }),
    post: (url, body) => withBody('POST', url, body),
    put: (url, body) => withBody('PUT', url, body),
    patch: (url, body) => withBody('PATCH', url, body),
  };
}

/** A person (operator-made, D41) with a session, and their caller on /app/v1. */
export async function makePerson(
  h: Harness,
  name: string,
): Promise<{ id: number; token: string; app: AppCaller }> {
  const u = await makeUser(h, name);
  return { ...u, app: appAs(h, u.token) };
}

/** A guild created by `owner` through POST /app/v1/guilds; its id and its `general` channel. */
export async function makeAppGuild(
  owner: { app: AppCaller },
  name = 'Guild',
): Promise<{ id: number; generalId: number }> {
  const g = await expectStatus(await owner.app.post('/guilds', { name }), 201);
  return { id: g.body.id, generalId: g.body.channels[0].id };
}

/**
 * Every people's event (D51) this process hands to the people's gateway, as parsed data, for
 * checking what is sent and to whom without a person's gateway connection.
 */
export class PeopleEvents {
  readonly all: Array<{ type: string; data: any; audience: PeopleDispatch['audience'] }> = []; // eslint-disable-line @typescript-eslint/no-explicit-any -- checked field by field
  private readonly off: () => void;

  constructor(h: Harness) {
    this.off = h.services.events.onPeople((e) =>
      this.all.push({ type: e.type, data: JSON.parse(e.data), audience: e.audience }),
    );
  }

  clear(): void {
    this.all.length = 0;
  }

  of(type: string): PeopleEvents['all'] {
    return this.all.filter((e) => e.type === type);
  }

  /** the events of `type` a person receives by a `users` audience */
  toUser(type: string, userId: number): PeopleEvents['all'] {
    return this.of(type).filter(
      (e) => e.audience.kind === 'users' && e.audience.userIds.includes(userId),
    );
  }

  stop(): void {
    this.off();
  }
}
