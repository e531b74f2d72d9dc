import { Permission } from '@parley/protocol';
import { useState } from 'preact/hooks';
import { del, patch, put } from '../lib/api.js';
import { explain, mayActOn } from '../lib/permissions.js';
import type { Guild, MemberSummary } from '../lib/types.js';
import { loadMembers, me, members } from '../state/store.js';
import { Confirm, val } from '../ui/kit.js';
import { toast } from '../ui/toast.js';
import '../ui/moderation.css';
import { when } from '../lib/time.js';

/** D58: time-outs last at most 28 days. */
const DURATIONS: Array<[string, number]> = [
  ['60 seconds', 60],
  ['5 minutes', 300],
  ['10 minutes', 600],
  ['1 hour', 3600],
  ['1 day', 86400],
  ['1 week', 604800],
  ['28 days', 28 * 86400],
];

/** What the viewer may do to a member here (D57 bit and D58 rank), as the menu shows it. */
export function moderationRights(guild: Guild, target: MemberSummary) {
  const list = members.value.get(guild.id);
  const myId = me.value?.id ?? 0;
  const viewer = { id: myId, roles: list?.find((m) => m.user.id === myId)?.roles };
  const t = { id: target.user.id, roles: target.roles };
  return {
    timeout: mayActOn(guild, viewer, t, Permission.MODERATE_MEMBERS),
    kick: mayActOn(guild, viewer, t, Permission.KICK_MEMBERS),
    ban: mayActOn(guild, viewer, t, Permission.BAN_MEMBERS),
  };
}

/**
 * A member's menu (click a name): time out (with a duration) / kick / ban, each with the reason
 * that goes to the audit log (D60 X-Audit-Log-Reason). Shown only for what the viewer holds the
 * bit for and only on members ranked below them (D58); if the server still refuses (the ranks
 * changed meanwhile), the rule is said in plain words.
 */
export function MemberActions(props: { guild: Guild; member: MemberSummary; onDone?: () => void }) {
  const { guild, member } = props;
  const name = member.user.name;
  const rights = moderationRights(guild, member);
  const [duration, setDuration] = useState('600');
  const [reason, setReason] = useState('');
  const [pending, setPending] = useState<'kick' | 'ban' | null>(null);
  const [refused, setRefused] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (!rights.timeout && !rights.kick && !rights.ban) return null;
  const base = `/app/v1/guilds/${guild.id}`;
  const opts = reason.trim() ? { reason: reason.trim() } : {};
  const run = async (f: () => Promise<unknown>, done: string) => {
    setBusy(true);
    setRefused(null);
    try {
      await f();
      toast(done, 'info');
      setPending(null);
      setReason('');
      void loadMembers(guild.id, true).catch(() => {});
      props.onDone?.();
    } catch (x) {
      setRefused(explain(x));
      setPending(null);
    } finally {
      setBusy(false);
    }
  };
  const until = member.timeoutUntil;
  const timedOut = until !== undefined && Date.parse(until) > Date.now();
  return (
    <section class="member-actions" aria-label={`Moderate ${name}`}>
      <h3>Moderate {name}</h3>
      {timedOut && <p class="timed-out small">Timed out until {when(until)}.</p>}
      <label class="inline">
        <span>Reason (shown in the audit log)</span>
        <input
          type="text"
          maxLength={512}
          value={reason}
          placeholder="Optional"
          aria-label={`Reason for moderating ${name}`}
          onInput={(e) => setReason(val(e))}
        />
      </label>
      {rights.timeout && (
        <div class="row">
          <label class="inline">
            <span class="sr-only">Time-out length</span>
            <select value={duration} onChange={(e) => setDuration(val(e))}>
              {DURATIONS.map(([l, s]) => (
                <option key={s} value={String(s)}>
                  {l}
                </option>
              ))}
            </select>
          </label>
          <button
            type="button"
            class="btn"
            disabled={busy}
            onClick={() =>
              void run(
                () =>
                  patch(
                    `${base}/members/${member.user.id}`,
                    {
                      timeoutUntil: new Date(Date.now() + Number(duration) * 1000).toISOString(),
                    },
                    opts,
                  ),
                `${name} is timed out`,
              )
            }
          >
            Time out {name}
          </button>
          {timedOut && (
            <button
              type="button"
              class="btn"
              disabled={busy}
              onClick={() =>
                void run(
                  () => patch(`${base}/members/${member.user.id}`, { timeoutUntil: null }, opts),
                  `${name}'s time-out ended`,
                )
              }
            >
              End time-out
            </button>
          )}
        </div>
      )}
      <div class="row">
        {rights.kick && (
          <button
            type="button"
            class="btn danger"
            disabled={busy}
            onClick={() => setPending('kick')}
          >
            Kick {name}
          </button>
        )}
        {rights.ban && (
          <button
            type="button"
            class="btn danger"
            disabled={busy}
            onClick={() => setPending('ban')}
          >
            Ban {name}
          </button>
        )}
      </div>
      <Confirm
        open={pending !== null}
        title={pending === 'ban' ? `Ban ${name}?` : `Kick ${name}?`}
        body={
          <>
            {pending === 'ban'
              ? `${name} is removed and cannot join again until unbanned.`
              : `${name} is removed from the guild; an invite lets them back.`}
            {reason.trim() && <p class="small">Reason: {reason.trim()}</p>}
          </>
        }
        confirm={pending === 'ban' ? 'Ban' : 'Kick'}
        danger
        onConfirm={() =>
          pending === 'ban'
            ? run(() => put(`${base}/bans/${member.user.id}`, undefined, opts), `${name} is banned`)
            : run(() => del(`${base}/members/${member.user.id}`, opts), `${name} is kicked`)
        }
        onClose={() => setPending(null)}
      />
      {refused && (
        <p class="refusal" role="alert">
          {refused}
        </p>
      )}
    </section>
  );
}
