import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { Health, type HealthLog } from '../../src/health/health.js';
import { toAppError } from '../../src/http/plugins/error-handler.js';
import {
  connectFailed,
  isDatabaseMisconfigured,
  isDatabaseUnreachable,
  isRedisUnavailable,
} from '../../src/storage/unreachable.js';

const err = (message: string, code?: string): Error =>
  Object.assign(new Error(message), code === undefined ? {} : { code });

// D72: one classifier decides "the database cannot be reached" — a 503 with Retry-After, never
// a 500 — and health logs each outage once when it begins and once when it ends.
describe('D72: what counts as the database being unreachable', () => {
  it.each([
    ['refused', err('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['reset', err('read ECONNRESET', 'ECONNRESET')],
    [
      'terminated by an administrator',
      err('terminating connection due to administrator command', '57P01'),
    ],
    ['starting up', err('the database system is starting up', '57P03')],
    ['connection failure (class 08)', err('connection failure', '08006')],
    ['too many connections', err('sorry, too many clients already', '53300')],
    ['a lost connection', err('Connection terminated unexpectedly')],
    [
      'a client that lost its connection',
      err('Client has encountered a connection error and is not queryable'),
    ],
    ['no connection in time', err('timeout exceeded when trying to connect')],
    [
      'connections not allowed',
      err('database "x" is not currently accepting connections', '55000'),
    ],
    [
      'every address refused',
      new AggregateError([err('a', 'ECONNREFUSED'), err('b', 'ECONNREFUSED')], ''),
    ],
    [
      'any failure to open a connection',
      connectFailed(err('password authentication failed', '28P01')),
    ],
  ])('%s → unreachable', (_name, e) => {
    expect(isDatabaseUnreachable(e)).toBe(true);
    const app = toAppError(e);
    expect([app.code, app.status, app.headers['retry-after'], app.extra.retryAfter]).toEqual([
      'SERVICE_UNAVAILABLE',
      503,
      '1',
      1,
    ]);
  });

  it.each([
    ['a unique violation', err('duplicate key', '23505')],
    ['a missing table', err('relation "x" does not exist', '42P01')],
    [
      'another state (55000) without the connection words',
      err('currval is not yet defined', '55000'),
    ],
    ['a bug', new TypeError('x is not a function')],
    // An outbound request's failure wraps ECONNREFUSED in `cause`: that is no database outage.
    ['a failed fetch', new TypeError('fetch failed', { cause: err('refused', 'ECONNREFUSED') })],
    ['not an error', 'ECONNREFUSED'],
  ])('%s → not unreachable (500 stays 500)', (_name, e) => {
    expect(isDatabaseUnreachable(e)).toBe(false);
    expect(toAppError(e).code).toBe('INTERNAL_ERROR');
  });

  it('a start-up does not wait for what waiting cannot cure: credentials, a missing database', () => {
    expect(isDatabaseMisconfigured(err('password authentication failed', '28P01'))).toBe(true);
    expect(isDatabaseMisconfigured(err('database "nope" does not exist', '3D000'))).toBe(true);
    expect(isDatabaseMisconfigured(err('connect ECONNREFUSED', 'ECONNREFUSED'))).toBe(false);
    expect(isDatabaseMisconfigured(err('not accepting connections', '55000'))).toBe(false);
    expect(isDatabaseMisconfigured(err('starting up', '57P03'))).toBe(false);
  });

  it("ioredis's failures while Redis is down are recognised (and a reply error is not)", () => {
    expect(
      isRedisUnavailable(err("Stream isn't writeable and enableOfflineQueue options is false")),
    ).toBe(true);
    expect(isRedisUnavailable(err('Connection is closed.'))).toBe(true);
    expect(isRedisUnavailable(err('Command timed out'))).toBe(true);
    expect(
      isRedisUnavailable(
        Object.assign(err('Reached the max retries per request limit (which is 0).'), {
          name: 'MaxRetriesPerRequestError',
        }),
      ),
    ).toBe(true);
    expect(isRedisUnavailable(err('ERR unknown command'))).toBe(false);
  });
});

describe('D72: each outage is logged once when it begins and once when it ends', () => {
  const recorder = (): { lines: string[]; log: HealthLog } => {
    const lines: string[] = [];
    return { lines, log: (_fields, msg) => lines.push(msg) };
  };

  it('database: a burst of failures is one outage; leftovers of old connections are not a new one', () => {
    const h = new Health({ redis: false });
    const { lines, log } = recorder();
    h.setLog(log);
    const e0 = h.database.connected(); // a connection opened before the fault
    const e0b = h.database.connected();
    for (let i = 0; i < 50; i++) h.database.lost(err('terminating', '57P01'), e0);
    for (let i = 0; i < 50; i++) h.database.connectFailed(err('refused', 'ECONNREFUSED'));
    expect(h.database.isDown).toBe(true);
    const e1 = h.database.connected(); // back
    expect(h.database.isDown).toBe(false);
    // An idle connection of before the fault fails only now, when next used: the same outage.
    h.database.lost(err('terminating', '57P01'), e0b);
    expect(h.database.isDown).toBe(false);
    expect(lines).toEqual([
      expect.stringMatching(/^database unavailable: /),
      expect.stringMatching(/^database available again after \d+(\.\d)? s$/),
    ]);
    // A connection opened after the recovery that fails is a new outage.
    h.database.lost(err('terminating', '57P01'), e1);
    expect(h.database.isDown).toBe(true);
    h.database.reachable();
    expect(lines).toHaveLength(4);
  });

  it('redis: down while any watched client has lost its connection, one line each way', () => {
    const h = new Health({ redis: true });
    const { lines, log } = recorder();
    h.setLog(log);
    const redis = h.redis as NonNullable<Health['redis']>;
    const a = new EventEmitter();
    const b = new EventEmitter();
    redis.watch(a);
    redis.watch(b);
    a.emit('ready');
    b.emit('ready');
    for (let i = 0; i < 20; i++) {
      a.emit('error', err('connect ECONNREFUSED', 'ECONNREFUSED'));
      a.emit('close');
      b.emit('close');
    }
    expect(redis.isDown).toBe(true);
    a.emit('ready');
    expect(redis.isDown).toBe(true); // b is still without Redis
    b.emit('ready');
    expect(redis.isDown).toBe(false);
    expect(lines).toEqual([
      expect.stringMatching(/^redis unavailable: /),
      expect.stringMatching(/^redis available again after /),
    ]);
    // A client closed on purpose (shutdown) is not an outage.
    redis.unwatch(a);
    a.emit('close');
    expect(redis.isDown).toBe(false);
    expect(lines).toHaveLength(2);
  });

  it('the quiet filter: errors of an outage are not logged by the loops that meet them', () => {
    const h = new Health({ redis: true });
    expect(h.quiet(err('Connection terminated unexpectedly'))).toBe(true);
    expect(h.quiet(err('Connection is closed.'))).toBe(true);
    expect(h.quiet(new TypeError('x is not a function'))).toBe(false);
  });
});
