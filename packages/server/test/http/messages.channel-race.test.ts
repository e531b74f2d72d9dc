import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createHarness,
  dbDescribe,
  expectError,
  expectStatus,
  type Harness,
  type World,
  makeWorld,
} from '../helpers/harness.js';

// Issue 29: a send's message row is written at its group commit's end, in one statement with the
// other sends' rows (storage/group-commit.ts foldAtGroupEnd). A channel deleted after the sends'
// access checks (D49) — in the same group or just before it — fails the sends whose rows name it,
// each with the channel's 404, never a 500; the other requests stand.
dbDescribe('a send racing its channel’s deletion', () => {
  let h: Harness;
  let w: World;

  beforeAll(async () => {
    h = await createHarness();
    w = await makeWorld(h);
  });
  afterAll(async () => {
    await h.close();
  });

  it('each send answers 200 or the channel’s 404, never a 500; a send elsewhere in the group stands', async () => {
    let refused = 0;
    for (let attempt = 0; attempt < 5; attempt++) {
      const ch = await expectStatus(
        await h.admin.post(`/guilds/${w.guildId}/channels`, { name: `race-${attempt}` }),
        201,
      );
      const other = w.channelId;
      // Started together: the sends and the deletion reach the group commit in one turn.
      const sends = Array.from({ length: 12 }, (_, i) =>
        h.as(w.bot.token).post(`/channels/${ch.body.id}/messages`, { content: `m${i}` }),
      );
      const elsewhere = h.as(w.bot.token).post(`/channels/${other}/messages`, { content: 'x' });
      const deletion = h.admin.delete(`/channels/${ch.body.id}`);
      const [answers, kept, deleted] = await Promise.all([Promise.all(sends), elsewhere, deletion]);
      expect(deleted.status).toBe(204);
      await expectStatus(kept, 200); // a send to another channel in the same group stands
      for (const r of answers) {
        if (r.status === 200) continue;
        expectError(r, 404, 'NOT_FOUND', 'a send to the deleted channel');
        refused++;
      }
    }
    // The race was run: at least one send met the deleted channel at its group's end.
    expect(refused).toBeGreaterThan(0);
  });
});
