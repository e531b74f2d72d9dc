import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { get } from '../lib/api.js';
import type { Guild, Member } from '../lib/types.js';
import { me } from '../state/store.js';

/**
 * My role ids in each guild (GET /api/v1/guilds/:guildId/members/:userId, D20), so that a
 * message whose `mentionRoles` names one of them is highlighted as mentioning me (D61). Read
 * again whenever the guild changes (the store refreshes it when my roles or permissions do).
 */
const mine = signal<ReadonlyMap<number, ReadonlySet<number>>>(new Map());
const NONE: ReadonlySet<number> = new Set();

export function useMyRoles(guild: Guild): ReadonlySet<number> {
  const userId = me.value?.id;
  useEffect(() => {
    if (userId === undefined) return;
    let live = true;
    get<Member>(`/api/v1/guilds/${guild.id}/members/${userId}`)
      .then((m) => {
        if (live) mine.value = new Map(mine.value).set(guild.id, new Set(m.roles));
      })
      .catch(() => {
        /* not a member any more: GUILD_DELETE says so */
      });
    return () => {
      live = false;
    };
  }, [guild, userId]);
  return mine.value.get(guild.id) ?? NONE;
}
