import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Domain } from '../../src/domain/context.js';
import { guildMessages } from '../../src/domain/messages/messages.service.js';
import { WebhookWorker } from '../../src/webhooks/worker.js';
import {
  createHarness,
  dbDescribe,
  expectStatus,
  join,
  makeBot,
  makeUser,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';
import { Receiver } from '../helpers/receiver.js';

// Issue 7 acceptance 1 and 3: every event type reaches the webhook with the D38 headers, and no
// delivery exists for a change that did not commit (D36).
dbDescribe('webhooks carry every event', () => {
  let h: Harness;
  let w: World;
  let worker: WebhookWorker;
  let receiver: Receiver;
  let secret: string;

  beforeAll(async () => {
    h = await createHarness({
      env: { PARLEY_WEBHOOK_ALLOW_INSECURE: 'true', PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true' },
    });
    worker = new WebhookWorker(h.services.domain, { pollMs: 20 });
    h.services.events.onWebhooks(() => worker.wake());
    worker.start();
    w = await makeWorld(h);
    receiver = await new Receiver().listen();
    secret = (
      await expectStatus(await h.admin.put(`/bots/${w.bot.id}/webhook`, { url: receiver.url }), 200)
    ).body.secret;
  });
  afterAll(async () => {
    await worker.stop();
    await receiver.close();
    await h.close();
  });

  it('all eight event types arrive, signed, with the D35 data', async () => {
    const human = h.as(w.human.token);
    const sent = await expectStatus(
      await human.post(`/channels/${w.channelId}/messages`, { content: 'hi' }),
      200,
    );
    const edited = await expectStatus(
      await human.put(`/channels/${w.channelId}/messages/${sent.body.id}`, { content: 'hi!' }),
      200,
    );
    await expectStatus(
      await human.delete(`/channels/${w.channelId}/messages/${sent.body.id}`),
      204,
    );
    const dm = await expectStatus(await human.post(`/users/${w.bot.userId}/dm`), 200);
    const dmSent = await expectStatus(
      await human.post(`/dm/channels/${dm.body.channelId}/messages`, { content: 'psst' }),
      200,
    );
    await expectStatus(
      await human.put(`/dm/channels/${dm.body.channelId}/messages/${dmSent.body.id}`, {
        content: 'psst!',
      }),
      200,
    );
    await expectStatus(
      await human.delete(`/dm/channels/${dm.body.channelId}/messages/${dmSent.body.id}`),
      204,
    );
    const newcomer = await makeUser(h, 'newcomer');
    await join(h, w.guildId, newcomer.id);
    await expectStatus(await h.admin.delete(`/guilds/${w.guildId}/members/${newcomer.id}`), 204);

    const got = await receiver.waitFor(8);
    const byType = new Map(
      got.map((g) => [g.headers['x-service-event'], JSON.parse(g.body.toString('utf8'))]),
    );
    for (const g of got) {
      expect(g.headers['x-service-signature']).toBe(
        'sha256=' + createHmac('sha256', secret).update(g.body).digest('hex'),
      );
      expect(JSON.parse(g.body.toString('utf8')).type).toBe(g.headers['x-service-event']);
    }
    expect([...byType.keys()].sort()).toEqual([
      'DM_MESSAGE_CREATE',
      'DM_MESSAGE_DELETE',
      'DM_MESSAGE_UPDATE',
      'GUILD_MEMBER_ADD',
      'GUILD_MEMBER_REMOVE',
      'MESSAGE_CREATE',
      'MESSAGE_DELETE',
      'MESSAGE_UPDATE',
    ]);
    expect(byType.get('MESSAGE_CREATE').data).toEqual(sent.body);
    expect(byType.get('MESSAGE_UPDATE').data).toEqual({
      ...sent.body,
      content: 'hi!',
      editedTimestamp: edited.body.editedTimestamp,
    });
    expect(byType.get('MESSAGE_DELETE').data).toEqual({
      id: sent.body.id,
      channelId: w.channelId,
      guildId: w.guildId,
    });
    expect(byType.get('DM_MESSAGE_CREATE').data).toEqual(dmSent.body);
    expect(byType.get('DM_MESSAGE_DELETE').data).toEqual({
      id: dmSent.body.id,
      channelId: dm.body.channelId,
    });
    expect(byType.get('GUILD_MEMBER_ADD').data).toMatchObject({
      guildId: w.guildId,
      user: { id: newcomer.id, name: 'newcomer' },
      roles: [],
    });
    expect(byType.get('GUILD_MEMBER_REMOVE').data).toEqual({
      guildId: w.guildId,
      user: {
        id: newcomer.id,
        name: 'newcomer',
        avatar: 'http://parley.test/cdn/avatars/default.png',
      },
    });
  });

  it('a bot without a webhook gets no delivery rows; a rolled-back write gets none either (D36)', async () => {
    const quiet = await makeBot(h, (await makeUser(h, 'o-quiet')).id, 'quiet');
    await join(h, w.guildId, quiet.userId);
    const d = h.services.domain;
    const failing: Domain = {
      ...d,
      events: {
        record: async (trx, event) => {
          await d.events.record(trx, event);
          throw new Error('forced failure after the write');
        },
        botTokenReset: (trx, botId) => d.events.botTokenReset(trx, botId),
      },
    };
    const human = { userId: w.human.id, name: 'human', isBot: false, botId: undefined };
    await expect(
      guildMessages.send(failing, human, w.channelId, { content: 'ghost' }),
    ).rejects.toThrow('forced failure');
    const ghost = await d.db
      .selectFrom('webhook_deliveries')
      .select('body')
      .where('body', 'like', '%ghost%')
      .execute();
    expect(ghost).toEqual([]);
    // The next committed message is delivered, and only to the bot that has a webhook.
    await expectStatus(
      await h.as(w.human.token).post(`/channels/${w.channelId}/messages`, { content: 'real' }),
      200,
    );
    const content = (): string[] =>
      receiver.received.map((g) => JSON.parse(g.body.toString('utf8')).data.content as string);
    for (let i = 0; !content().includes('real'); i++) {
      if (i > 200) throw new Error('the committed message was not delivered');
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(content()).not.toContain('ghost');
    const rows = await d.db
      .selectFrom('webhook_deliveries')
      .select('bot_id')
      .where('bot_id', '=', quiet.id)
      .execute();
    expect(rows).toEqual([]);
  });
});
