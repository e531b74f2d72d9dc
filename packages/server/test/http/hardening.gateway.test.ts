import { Permission } from '@parley/protocol';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_CONNECTIONS_PER_PERSON } from '../../src/gateway/people-gateway.js';
import { MAX_UNSENT_BYTES } from '../../src/gateway/person-connection.js';
import { REPLAY_MAX_BYTES } from '../../src/gateway/people-hub.js';
import {
  ADMIN_TOKEN,
  dbDescribe,
  expectError,
  expectStatus,
  join,
  makeUser,
  type Harness,
} from '../helpers/harness.js';
import { startLiveServer, type GatewayClient, type LiveServer } from '../helpers/live-server.js';

// Issue 21 (D70), the high finding: one ordinary account must not be able to make the server hold
// memory without bound through the people's gateway. Over real WebSocket: a client that stops
// reading is closed (4000) with the server's queue for it bounded; a person's 17th connection
// closes the oldest (4011); a session's replay buffer is bounded in bytes; GUILD_UPDATE never
// carries the guild's channels; a private channel is created in one step and its CHANNEL_CREATE
// reaches only those who can see it.

const MiB = 1024 * 1024;
const TOPIC = 't'.repeat(1024);

/** A metric's value from /metrics (the whole process: several apps add up, so deltas are used). */
async function metric(h: Harness, name: string, labels = ''): Promise<number> {
  const r = await h.request({
    method: 'GET',
    url: '/metrics',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  const line = r.raw.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

/**
 * Channels straight into the database (the routes would take minutes for hundreds): each with
 * a 1 KiB topic, so a GUILD_CREATE of the guild is large.
 */
async function fillChannels(h: Harness, guildId: number, n: number): Promise<void> {
  const d = h.services.domain;
  const rows = Array.from({ length: n }, (_, i) => ({
    id: d.ids.next(),
    guild_id: guildId,
    type: 0,
    name: `filler-${i}`,
    topic: TOPIC,
    dm_user_low: null,
    dm_user_high: null,
    created_at: d.clock.now(),
  }));
  for (let i = 0; i < rows.length; i += 100)
    await d.db
      .insertInto('channels')
      .values(rows.slice(i, i + 100))
      .execute();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, ok: () => Promise<boolean> | boolean, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** The next dispatch of type `t`, passing over presence and other people's types. */
async function nextOf(c: GatewayClient, t: string, timeoutMs = 5000) {
  for (;;) {
    const f = await c.next({ timeoutMs });
    if (f.op === 0 && f.t === t) return f;
  }
}

dbDescribe("people's gateway bounds (D70)", () => {
  let live: LiveServer;
  let h: Harness;
  let owner: { id: number; token: string };
  let guildId: number;

  beforeAll(async () => {
    live = await startLiveServer();
    h = live.h;
    owner = await makeUser(h, 'owner');
    const g = await expectStatus(
      await h.admin.post('/guilds', { name: 'Big', ownerId: owner.id }),
      201,
    );
    guildId = g.body.id;
    // ~480 KiB per GUILD_CREATE of this guild.
    await fillChannels(h, guildId, 450);
  });
  afterAll(async () => live.close());

  /** Join and leave the big guild `times` times: a GUILD_CREATE of ~480 KiB to `userId` each time. */
  async function churn(userId: number, times: number, after?: () => Promise<void>) {
    for (let i = 0; i < times; i++) {
      await join(h, guildId, userId);
      await expectStatus(await h.admin.delete(`/guilds/${guildId}/members/${userId}`), 204);
      await after?.();
    }
  }

  it('a socket that stops reading is closed with 4000 once 4 MiB wait for it; the queue stays bounded', async () => {
    const reader = await makeUser(h, 'reader');
    const stalled = await makeUser(h, 'stalled');
    const quiet = await live.connect(stalled.token);
    await quiet.ready();
    const healthy = await live.connect(reader.token);
    await healthy.ready();
    // The client stops reading: frames stay in the kernel's buffers, then in the server's queue.
    (quiet.ws as unknown as { _socket: Socket })._socket.pause();
    const closed4000 = '{kind="person",code="4000"}';
    const before = await metric(h, 'parley_gateway_connections_closed_total', closed4000);
    let maxUnsent = 0;
    let rounds = 0;
    for (; rounds < 80; rounds++) {
      await churn(stalled.id, 1, async () => {
        maxUnsent = Math.max(maxUnsent, await metric(h, 'parley_gateway_unsent_bytes'));
      });
      if (maxUnsent > MAX_UNSENT_BYTES) break;
    }
    // Closed by the server (the client, not reading, cannot see the close frame itself): counted
    // when the socket ends, which for a peer that never reads the close frame is after the
    // close grace (3 s), so possibly after the last round on a fast machine.
    await until('the 4000 close to be counted', async () => {
      return (await metric(h, 'parley_gateway_connections_closed_total', closed4000)) > before;
    });
    expect(await metric(h, 'parley_gateway_connections_closed_total', closed4000)).toBe(before + 1);
    // The queue never held more than the bound and one write (a GUILD_CREATE here, < 1 MiB).
    expect(maxUnsent).toBeGreaterThan(MAX_UNSENT_BYTES / 2);
    expect(maxUnsent).toBeLessThanOrEqual(MAX_UNSENT_BYTES + MiB);
    // Its queue is let go: what remains queued is other sockets' (none here).
    await until('the queue to be released', async () => {
      return (await metric(h, 'parley_gateway_unsent_bytes')) < 64 * 1024;
    });
    // Someone reading keeps getting everything meanwhile.
    await churn(reader.id, 1);
    const created = await nextOf(healthy, 'GUILD_CREATE');
    expect(created.d.channels).toHaveLength(450);
    quiet.terminate();
    healthy.terminate();
  });

  it("a person's 17th connection closes the oldest with 4011 (not resumable); the others stay", async () => {
    const p = await makeUser(h, 'many');
    const conns: GatewayClient[] = [];
    for (let i = 0; i < MAX_CONNECTIONS_PER_PERSON; i++) {
      live.clock.advance(1000); // D51: 10 attempts at once, then 2 a second
      const c = await live.connect(p.token);
      await c.ready();
      conns.push(c);
    }
    live.clock.advance(1000);
    const extra = await live.connect(p.token);
    await extra.ready();
    const first = conns[0] as GatewayClient;
    expect(await first.closed).toMatchObject({ code: 4011 });
    // The session went with it: resuming it is op 9 and a fresh READY.
    const seq = first.lastSeq;
    live.clock.advance(1000);
    const again = await live.connect(p.token, {
      query: `sessionId=${(await sessionOf(first)) ?? 'x'}&seq=${seq}`,
    });
    expect((await again.next()).op).toBe(10);
    expect((await again.next()).op).toBe(9);
    // That connection was the 17th again: the oldest now (the second) closed with 4011.
    expect(await (conns[1] as GatewayClient).closed).toMatchObject({ code: 4011 });
    for (const c of conns.slice(2)) expect(c.ws.readyState).toBe(c.ws.OPEN);
    expect(extra.ws.readyState).toBe(extra.ws.OPEN);
    for (const c of [...conns, extra, again]) c.terminate();
  });

  it('a person keeps at most 16 sessions on a node, resumable ones included: dropping and reopening frees the oldest', async () => {
    const p = await makeUser(h, 'dropper');
    const dropped: Array<{ sessionId: string; seq: number }> = [];
    for (let i = 0; i < MAX_CONNECTIONS_PER_PERSON + 1; i++) {
      live.clock.advance(1000);
      const c = await live.connect(p.token);
      const { sessionId } = await c.ready();
      dropped.push({ sessionId, seq: c.lastSeq });
      c.terminate(); // resumable for the window, and still holding a replay buffer
      await until('the drop', () => c.ws.readyState === c.ws.CLOSED);
      await sleep(50);
    }
    // The oldest was ended to make room for the 17th: its resume is op 9.
    live.clock.advance(1000);
    const first = dropped[0] as { sessionId: string; seq: number };
    const old = await live.connect(p.token, {
      query: `sessionId=${first.sessionId}&seq=${first.seq}`,
    });
    expect((await old.next()).op).toBe(10);
    expect((await old.next()).op).toBe(9);
    old.terminate();
    // The newest resumes.
    live.clock.advance(1000);
    const last = dropped.at(-1) as { sessionId: string; seq: number };
    const recent = await live.connect(p.token, {
      query: `sessionId=${last.sessionId}&seq=${last.seq}`,
    });
    expect((await recent.next()).op).toBe(10);
    expect((await nextOf(recent, 'RESUMED')).d.sessionId).toBe(last.sessionId);
    recent.terminate();
  });

  /** The sessionId of a client's READY (from what it received). */
  async function sessionOf(c: GatewayClient): Promise<string | undefined> {
    for (const t of c.raw) {
      const f = JSON.parse(t) as { t?: string; d?: { sessionId?: string } };
      if (f.t === 'READY') return f.d?.sessionId;
    }
    return undefined;
  }

  it('replay buffers are bounded in bytes: 1 MiB a session, reading or dropped (then op 9)', async () => {
    const reading = await makeUser(h, 'reading');
    const away = await makeUser(h, 'away');
    const r = await live.connect(reading.token);
    await r.ready();
    const c = await live.connect(away.token);
    const { sessionId } = await c.ready();
    const seq = c.lastSeq;
    c.terminate(); // dropped, not closed: resumable, still collecting its events
    await sleep(200);
    const base = await metric(h, 'parley_gateway_replay_bytes');
    let most = 0;
    // Eight GUILD_CREATEs of ~490 KiB each to both: 3.9 MiB of frames per session.
    for (let i = 0; i < 8; i++) {
      await churn(reading.id, 1);
      await churn(away.id, 1);
      most = Math.max(most, (await metric(h, 'parley_gateway_replay_bytes')) - base);
    }
    for (let i = 0; i < 8; i++) await nextOf(r, 'GUILD_CREATE');
    // Both buffers together: never more than 1 MiB each beyond their newest frame.
    expect(most).toBeGreaterThan(REPLAY_MAX_BYTES / 2);
    expect(most).toBeLessThanOrEqual(2 * (REPLAY_MAX_BYTES + 512 * 1024));
    // The dropped one missed more than its buffer holds: its resume is op 9 and a fresh READY.
    live.clock.advance(1000);
    const back = await live.connect(away.token, { query: `sessionId=${sessionId}&seq=${seq}` });
    expect((await back.next()).op).toBe(10);
    expect((await back.next()).op).toBe(9);
    expect((await back.dispatch('READY')).d.sessionId).not.toBe(sessionId);
    back.terminate();
    r.terminate();
  });

  it("a rename storm in a big guild: GUILD_UPDATE is the guild's own fields, never its channels", async () => {
    const p = await makeUser(h, 'watcher');
    await join(h, guildId, p.id);
    const c = await live.connect(p.token);
    await c.ready();
    for (let i = 0; i < 20; i++)
      await expectStatus(
        await h.request({
          method: 'PATCH',
          url: `/app/v1/guilds/${guildId}`,
          headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ name: `Big ${i}` }),
        }),
        200,
      );
    for (let i = 0; i < 20; i++) {
      const f = await nextOf(c, 'GUILD_UPDATE');
      expect(f.d).toStrictEqual({ id: guildId, name: `Big ${i}`, ownerId: owner.id });
    }
    const sizes = c.raw.filter((t) => t.includes('"GUILD_UPDATE"')).map((t) => t.length);
    expect(Math.max(...sizes)).toBeLessThan(200);
    c.terminate();
    await expectStatus(await h.admin.delete(`/guilds/${guildId}/members/${p.id}`), 204);
  });

  it('a private channel in one step: CHANNEL_CREATE only to those who can see it', async () => {
    const g = await expectStatus(
      await h.admin.post('/guilds', { name: 'Small', ownerId: owner.id }),
      201,
    );
    const member = await makeUser(h, 'member');
    await join(h, g.body.id, member.id);
    const staff = await expectStatus(
      await h.admin.post(`/guilds/${g.body.id}/roles`, { name: 'staff', permissions: 0 }),
      201,
    );
    const seer = await makeUser(h, 'seer');
    await join(h, g.body.id, seer.id, [staff.body.id]);
    const [mc, sc, oc] = await Promise.all(
      [member, seer, owner].map(async (u) => {
        const c = await live.connect(u.token);
        await c.ready();
        return c;
      }),
    );
    const r = await expectStatus(
      await h.request({
        method: 'POST',
        url: `/app/v1/guilds/${g.body.id}/channels`,
        headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
        payload: JSON.stringify({
          name: 'staff-only',
          topic: 'plans',
          overwrites: [
            { roleId: g.body.id, allow: 0, deny: Permission.VIEW_CHANNEL },
            { roleId: staff.body.id, allow: Permission.VIEW_CHANNEL, deny: 0 },
          ],
        }),
      }),
      201,
    );
    const channel = {
      id: r.body.id,
      guildId: g.body.id,
      name: 'staff-only',
      type: 0,
      topic: 'plans',
    };
    expect(r.body).toStrictEqual(channel);
    expect((await nextOf(sc as GatewayClient, 'CHANNEL_CREATE')).d).toStrictEqual(channel);
    expect((await nextOf(oc as GatewayClient, 'CHANNEL_CREATE')).d).toStrictEqual(channel);
    // A message in a public channel afterwards: the member's next event — never the private one.
    const general = await expectStatus(
      await h.admin.post(`/guilds/${g.body.id}/channels`, { name: 'general' }),
      201,
    );
    expect((await nextOf(mc as GatewayClient, 'CHANNEL_CREATE')).d.id).toBe(general.body.id);
    expect((mc as GatewayClient).raw.join('\n')).not.toContain('staff-only');
    // The member cannot read it; the seer can.
    expectError(await h.as(member.token).get(`/channels/${r.body.id}`), 403, 'FORBIDDEN');
    await expectStatus(await h.as(seer.token).get(`/channels/${r.body.id}`), 200);
    // Deleted: only those who could see it hear of it.
    await expectStatus(
      await h.request({
        method: 'DELETE',
        url: `/app/v1/channels/${r.body.id}`,
        headers: { authorization: `Bearer ${owner.token}` },
      }),
      204,
    );
    expect((await nextOf(sc as GatewayClient, 'CHANNEL_DELETE')).d).toStrictEqual({
      id: r.body.id,
      guildId: g.body.id,
    });
    await sleep(200);
    expect((mc as GatewayClient).raw.join('\n')).not.toContain(String(r.body.id));
    for (const c of [mc, sc, oc]) c?.terminate();
  });
});
