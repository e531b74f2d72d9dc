import { signal } from '@preact/signals';
import { useEffect, useRef, useState } from 'preact/hooks';
import { describe, get, put } from '../lib/api.js';
import type { NotificationLevel, NotificationSetting } from '../lib/types.js';
import { toast } from './toast.js';
import './notify.css';
import { when } from '../lib/time.js';

/**
 * D66: a guild's or a channel's notification level and mute, in a small menu: all messages /
 * only mentions / nothing, mute for 1 hour / 8 hours / until unmuted. The person's settings are
 * read once (GET /app/v1/users/@me/notification-settings) and kept here; a choice is one PUT.
 */
export type NotifyTarget = { guildId: number } | { channelId: number };

const settings = signal<readonly NotificationSetting[] | null>(null);
let loading: Promise<void> | undefined;
function loadSettings(): Promise<void> {
  loading ??= get<{ settings: NotificationSetting[] }>('/app/v1/users/@me/notification-settings')
    .then((r) => {
      settings.value = r.settings;
    })
    .catch(() => {
      loading = undefined;
    });
  return loading;
}
/** Forget them (a logout: the next person reads their own). */
export function resetNotifySettings(): void {
  settings.value = null;
  loading = undefined;
}

const same = (s: NotificationSetting, t: NotifyTarget): boolean =>
  'guildId' in t ? s.guildId === t.guildId : s.channelId === t.channelId;

/** "Until I unmute": a time no one will reach. */
export const FOREVER = '9999-12-31T23:59:59.000Z';

function currentOf(t: NotifyTarget, fallback: NotificationLevel, inherit?: NotifyTarget) {
  // D66: a channel without its own setting follows its guild's
  const s =
    settings.value?.find((x) => same(x, t)) ??
    (inherit ? settings.value?.find((x) => same(x, inherit)) : undefined);
  const until = s?.muteUntil ? Date.parse(s.muteUntil) : 0;
  return { level: s?.level ?? fallback, mutedUntil: until > Date.now() ? until : 0 };
}

async function choose(
  t: NotifyTarget,
  level: NotificationLevel,
  muteUntil: string | null,
): Promise<void> {
  await put('/app/v1/users/@me/notification-settings', { ...t, level, muteUntil });
  const next: NotificationSetting = { ...t, level, muteUntil };
  settings.value = [...(settings.value ?? []).filter((x) => !same(x, t)), next];
}

const LEVELS: Array<[NotificationLevel, string]> = [
  ['all', 'All messages'],
  ['mentions', 'Only mentions'],
  ['none', 'Nothing'],
];
const MUTES: Array<[number | null, string]> = [
  [3_600_000, 'Mute for 1 hour'],
  [8 * 3_600_000, 'Mute for 8 hours'],
  [null, 'Mute until I unmute'],
];

function Bell({ off }: { off: boolean }) {
  return (
    <svg
      class="icon"
      width={18}
      height={18}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      stroke-width="2"
      stroke-linecap="round"
      stroke-linejoin="round"
      aria-hidden="true"
      focusable="false"
    >
      <path d="M18 8a6 6 0 0 0-12 0c0 7-3 9-3 9h18s-3-2-3-9M13.7 21a2 2 0 0 1-3.4 0" />
      {off && <path d="M3 3l18 18" />}
    </svg>
  );
}

export function NotifyMenu({
  target,
  name,
  fallback = 'mentions',
  inherit,
}: {
  target: NotifyTarget;
  /** a channel's guild: shown while the channel has no setting of its own */
  inherit?: NotifyTarget;
  /** what it is about, for the button's label ("general", "My guild") */
  name: string;
  fallback?: NotificationLevel;
}) {
  const [open, setOpen] = useState(false);
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => void loadSettings(), []);
  useEffect(() => {
    if (!open) return;
    const away = (e: Event) => {
      if (ref.current && !ref.current.contains(e.target as Node)) setOpen(false);
    };
    const esc = (e: KeyboardEvent) => {
      if (e.key === 'Escape') setOpen(false);
    };
    document.addEventListener('pointerdown', away);
    document.addEventListener('keydown', esc);
    return () => {
      document.removeEventListener('pointerdown', away);
      document.removeEventListener('keydown', esc);
    };
  }, [open]);
  const cur = currentOf(target, fallback, inherit);
  const pick = (level: NotificationLevel, muteUntil: string | null) => {
    setOpen(false);
    choose(target, level, muteUntil).catch((err: unknown) => toast(describe(err), 'error'));
  };
  const muted = cur.mutedUntil > 0;
  return (
    <div class="notify" ref={ref}>
      <button
        type="button"
        class={`icon-btn${muted || cur.level === 'none' ? ' notify-off' : ''}`}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-label={`Notifications for ${name}`}
        title={`Notifications for ${name}`}
        onClick={() => setOpen(!open)}
      >
        <Bell off={muted || cur.level === 'none'} />
      </button>
      {open && (
        <div class="notify-menu" role="menu" aria-label={`Notifications for ${name}`}>
          {LEVELS.map(([level, label]) => (
            <button
              key={level}
              type="button"
              role="menuitemradio"
              aria-checked={cur.level === level}
              onClick={() => pick(level, muted ? new Date(cur.mutedUntil).toISOString() : null)}
            >
              {label}
            </button>
          ))}
          <hr />
          {muted ? (
            <button type="button" role="menuitem" onClick={() => pick(cur.level, null)}>
              Unmute
              <span class="muted small">
                {cur.mutedUntil >= Date.parse(FOREVER)
                  ? ' (muted until you unmute)'
                  : ` (muted until ${when(cur.mutedUntil)})`}
              </span>
            </button>
          ) : (
            MUTES.map(([ms, label]) => (
              <button
                key={label}
                type="button"
                role="menuitem"
                onClick={() =>
                  pick(cur.level, ms === null ? FOREVER : new Date(Date.now() + ms).toISOString())
                }
              >
                {label}
              </button>
            ))
          )}
        </div>
      )}
    </div>
  );
}
