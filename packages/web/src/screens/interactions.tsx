import { MessageFlags, INTERACTION_WINDOW_MS, type Button } from '@parley/protocol';
import { signal } from '@preact/signals';
import { useEffect, useState } from 'preact/hooks';
import { describe, post } from '../lib/api.js';
import type { Message } from '../lib/types.js';
import type { ChannelLog } from '../state/store.js';
import { toast } from '../ui/toast.js';
import './interactions.css';

/**
 * D64–D65 in the message list: a bot message's buttons and selects (disabled while the
 * interaction they started is unanswered), the ephemeral mark "Only you can see this" with a
 * dismiss, and the "thinking…" of a deferred answer — shown after one second, and "did not
 * answer" only once the 15-minute window has passed.
 */

/** A clock for the marks, ticking once a second while something waits (tests move it). */
export const now = signal(Date.now());
let ticking = 0;
function useTick(active: boolean): void {
  useEffect(() => {
    if (!active) return;
    ticking++;
    const t = setInterval(() => (now.value = Date.now()), 250);
    return () => {
      clearInterval(t);
      ticking--;
    };
  }, [active]);
}
export const isTicking = (): boolean => ticking > 0;

/** D65: show "thinking…" after this long without an answer. */
export const THINKING_AFTER_MS = 1000;

/** A message's interaction line: who ran what; ephemeral and "thinking…" marks. */
export function InteractionMarks({
  m,
  log,
  who,
}: {
  m: Message;
  log: ChannelLog;
  /** the name of a user id (the one who ran the command) */
  who: (id: number) => string | undefined;
}) {
  const flags = m.flags ?? 0;
  const loading = (flags & MessageFlags.LOADING) !== 0;
  const ephemeral = (flags & MessageFlags.EPHEMERAL) !== 0;
  useTick(loading);
  if (!m.interaction && !ephemeral && !loading) return null;
  const waited = now.value - Date.parse(m.timestamp);
  return (
    <div class="interaction-marks small">
      {m.interaction && (
        <span class="muted">
          {who(m.interaction.userId) ?? 'Someone'} used{' '}
          <span class="command-name">/{m.interaction.name}</span>
        </span>
      )}
      {loading && waited >= INTERACTION_WINDOW_MS && (
        <span class="interaction-failed" role="status">
          The bot did not answer.
        </span>
      )}
      {loading && waited >= THINKING_AFTER_MS && waited < INTERACTION_WINDOW_MS && (
        <span class="thinking" role="status">
          {m.author.name} is thinking…
        </span>
      )}
      {ephemeral && (
        <span class="ephemeral">
          Only you can see this ·{' '}
          <button type="button" class="link-btn" onClick={() => log.remove(m.id)}>
            Dismiss
          </button>
        </span>
      )}
    </div>
  );
}

/**
 * D65: a bot message's action rows. A click (or a select's choice) sends the interaction; the
 * message's components stay disabled until the bot answers — the message changes, or a reply
 * to that interaction arrives — or the 15-minute window ends.
 */
export function Components({ m, log }: { m: Message; log: ChannelLog }) {
  const [pending, setPending] = useState<{ id: number; of: Message; at: number } | null>(null);
  const rows = m.components ?? [];
  const answered =
    pending !== null &&
    (pending.of !== m ||
      log.items.value.some((x) => x.interaction?.id === pending.id) ||
      now.value - pending.at > INTERACTION_WINDOW_MS);
  useTick(pending !== null && !answered);
  useEffect(() => {
    if (answered) setPending(null);
  }, [answered]);
  const busy = pending !== null && !answered;
  const use = async (customId: string, values?: string[]) => {
    if (busy) return;
    const at = Date.now();
    setPending({ id: 0, of: m, at });
    try {
      const r = await post<{ id: number }>('/api/v1/interactions', {
        type: 3,
        messageId: m.id,
        customId,
        ...(values ? { values } : {}),
      });
      setPending((p) => (p && p.at === at ? { ...p, id: r.id } : p));
    } catch (x) {
      setPending(null);
      toast(describe(x));
    }
  };
  if (rows.length === 0) return null;
  return (
    <div class="components" aria-busy={busy}>
      {rows.map((row, i) => (
        <div class="action-row" key={i}>
          {row.components.map((c) =>
            c.type === 2 ? (
              <ButtonView
                key={c.customId ?? c.url}
                b={c}
                busy={busy}
                onPress={() => void use(c.customId!)}
              />
            ) : (
              <select
                key={c.customId}
                class="component-select"
                aria-label={c.placeholder ?? 'Choose'}
                disabled={busy || c.disabled === true}
                multiple={(c.maxValues ?? 1) > 1}
                onChange={(e) => {
                  const chosen = [...e.currentTarget.selectedOptions].map((o) => o.value);
                  if (chosen.length >= (c.minValues ?? 1)) void use(c.customId, chosen);
                }}
              >
                {(c.maxValues ?? 1) <= 1 && <option value="">{c.placeholder ?? 'Choose…'}</option>}
                {c.options.map((o) => (
                  <option key={o.value} value={o.value} title={o.description}>
                    {o.label}
                  </option>
                ))}
              </select>
            ),
          )}
        </div>
      ))}
    </div>
  );
}

const STYLE = ['', 'primary', 'secondary', 'success', 'danger', 'link'] as const;

function ButtonView({ b, busy, onPress }: { b: Button; busy: boolean; onPress: () => void }) {
  const label = (
    <>
      {b.emoji && <span aria-hidden="true">{b.emoji} </span>}
      {b.label}
    </>
  );
  if (b.style === 5)
    return (
      <a class="component-btn link" href={b.url} target="_blank" rel="noopener noreferrer">
        {label} ↗
      </a>
    );
  return (
    <button
      type="button"
      class={`component-btn ${STYLE[b.style] ?? 'secondary'}`}
      disabled={busy || b.disabled === true}
      onClick={onPress}
    >
      {label}
    </button>
  );
}
