import {
  INTERACTION_WINDOW_MS,
  OptionType,
  type ChannelCommands,
  type Command,
  type CommandLeafOption,
} from '@parley/protocol';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, describe, get, post } from '../lib/api.js';
import type { ChannelLog } from '../state/store.js';
import { guilds, loadMembers, members } from '../state/store.js';
import { now, THINKING_AFTER_MS } from './interactions.js';
import './interactions.css';

/**
 * D64: typing `/` at the start of the composer opens the command picker — the commands of the
 * guild's bots the person may run in this channel (GET /channels/:id/commands), grouped by bot,
 * filtered as they type. Choosing one opens an inline form of its options: typed inputs, choices
 * as a list, users, channels and roles as pickers, autocomplete from the bot (type 4), required
 * ones marked. Enter (or Run) invokes it (POST /interactions type 2); a refused option is shown
 * on its field. Then "<bot> is thinking…" after one second, until the answer arrives in the
 * channel (a message carrying this interaction), and "did not answer" after 15 minutes.
 */

type Value = string | number | boolean;

const cache = new Map<number, Promise<ChannelCommands>>();
function commandsOf(channelId: number): Promise<ChannelCommands> {
  let p = cache.get(channelId);
  if (!p) {
    p = get<ChannelCommands>(`/api/v1/channels/${channelId}/commands`);
    cache.set(channelId, p);
    // a bot may change its list: read it again on the next `/` after a minute
    setTimeout(() => cache.delete(channelId), 60_000);
    p.catch(() => cache.delete(channelId));
  }
  return p;
}

export interface PickerKeys {
  /** the composer's keydown, first: true when the picker used the key */
  onKey(e: KeyboardEvent): boolean;
}

/** The status of the last invocation, under the composer. */
function Waiting(props: { log: ChannelLog; id: number; at: number; bot: string }) {
  const [, tick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => {
      now.value = Date.now();
      tick((n) => n + 1);
    }, 250);
    return () => clearInterval(t);
  }, []);
  const answer = props.log.items.value.find((m) => m.interaction?.id === props.id);
  // the answer (or its own "thinking…" message) is in the list: it says the rest
  if (answer) return null;
  const waited = now.value - props.at;
  if (waited >= INTERACTION_WINDOW_MS)
    return (
      <p class="interaction-failed small" role="status">
        {props.bot} did not answer.
      </p>
    );
  if (waited < THINKING_AFTER_MS) return null;
  return (
    <p class="thinking small" role="status">
      {props.bot} is thinking…
    </p>
  );
}

export function CommandPicker(props: {
  log: ChannelLog;
  text: string;
  setText: (t: string) => void;
  keys: { current: PickerKeys | null };
}) {
  const channelId = props.log.channelId;
  const [list, setList] = useState<ChannelCommands | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [active, setActive] = useState(0);
  const [chosen, setChosen] = useState<Command | null>(null);
  const [waiting, setWaiting] = useState<{ id: number; at: number; bot: string } | null>(null);
  const open = props.text.startsWith('/');

  useEffect(() => {
    if (!open || list) return;
    commandsOf(channelId).then(setList, (x) => setError(describe(x)));
  }, [open, channelId, list]);
  useEffect(() => {
    setList(null);
    setChosen(null);
  }, [channelId]);

  const query = props.text.slice(1).split(/\s/)[0]!.toLowerCase();
  const matches = (list?.commands ?? []).filter((c) => c.name.startsWith(query));
  const botName = (c: Command) => list?.bots.find((b) => b.id === c.botId)?.name ?? 'bot';

  // the chosen command stays while the text still names it
  useEffect(() => {
    if (chosen && !props.text.startsWith(`/${chosen.name}`)) setChosen(null);
  }, [props.text, chosen]);
  useEffect(() => setActive(0), [query]);

  const choose = (c: Command) => {
    setChosen(c);
    props.setText(`/${c.name} `);
  };

  props.keys.current =
    open && !chosen
      ? {
          onKey: (e) => {
            if (matches.length === 0) return false;
            if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
              e.preventDefault();
              const d = e.key === 'ArrowDown' ? 1 : -1;
              setActive((a) => (a + d + matches.length) % matches.length);
              return true;
            }
            if (e.key === 'Enter' || e.key === 'Tab') {
              e.preventDefault();
              choose(matches[Math.min(active, matches.length - 1)]!);
              return true;
            }
            if (e.key === 'Escape') {
              props.setText('');
              return true;
            }
            return false;
          },
        }
      : chosen
        ? {
            // the form's own fields take Enter; from the composer, Enter runs it too
            onKey: (e) => {
              if (e.key === 'Enter' && !e.shiftKey) {
                e.preventDefault();
                document.querySelector<HTMLFormElement>('.command-form')?.requestSubmit();
                return true;
              }
              if (e.key === 'Escape') {
                props.setText('');
                return true;
              }
              return false;
            },
          }
        : null;

  const ran = (id: number, c: Command) => {
    setWaiting({ id, at: Date.now(), bot: botName(c) });
    setChosen(null);
    props.setText('');
  };

  return (
    <>
      {waiting && <Waiting log={props.log} {...waiting} />}
      {open && !chosen && (
        <div class="command-picker" role="listbox" aria-label="Commands">
          {error && <p class="composer-error">{error}</p>}
          {!list && !error && <p class="muted small">Loading commands…</p>}
          {list && matches.length === 0 && (
            <p class="muted small">
              {list.commands.length === 0
                ? 'No bot here offers commands you may run.'
                : `No command starts with “/${query}”.`}
            </p>
          )}
          {list &&
            list.bots
              .filter((b) => matches.some((c) => c.botId === b.id))
              .map((b) => (
                <div class="command-group" key={b.id}>
                  <div class="command-bot small muted">{b.name}</div>
                  {matches
                    .filter((c) => c.botId === b.id)
                    .map((c) => (
                      <button
                        type="button"
                        role="option"
                        key={c.id}
                        aria-selected={matches.indexOf(c) === active}
                        class={`command-item${matches.indexOf(c) === active ? ' active' : ''}`}
                        onMouseDown={(e) => e.preventDefault()}
                        onClick={() => choose(c)}
                      >
                        <span class="command-name">/{c.name}</span>
                        <span class="muted small">{c.description}</span>
                      </button>
                    ))}
                </div>
              ))}
        </div>
      )}
      {chosen && (
        <CommandForm
          key={chosen.id}
          log={props.log}
          command={chosen}
          bot={botName(chosen)}
          onRan={(id) => ran(id, chosen)}
        />
      )}
    </>
  );
}

const TYPE_NAMES: Record<number, string> = {
  3: 'text',
  4: 'whole number',
  5: 'yes / no',
  6: 'user',
  7: 'channel',
  8: 'role',
  10: 'number',
};

function CommandForm(props: {
  log: ChannelLog;
  command: Command;
  bot: string;
  onRan: (id: number) => void;
}) {
  const c = props.command;
  const subs = (c.options ?? []).filter((o) => o.type === OptionType.SUB_COMMAND);
  const [sub, setSub] = useState<string>(subs[0]?.name ?? '');
  const leaves: CommandLeafOption[] =
    subs.length > 0 ? (subs.find((s) => s.name === sub)?.options ?? []) : (c.options ?? []);
  const [values, setValues] = useState<Record<string, string>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [suggest, setSuggest] = useState<{
    name: string;
    choices: { name: string; value: Value }[];
  } | null>(null);
  const first = useRef<HTMLElement | null>(null);
  useEffect(() => first.current?.focus(), [c.id, sub]);
  const guildId = props.log.kind === 'guild' ? findGuild(props.log.channelId) : undefined;
  useEffect(() => {
    if (guildId !== undefined && leaves.some((o) => o.type === OptionType.USER))
      void loadMembers(guildId);
  }, [guildId, sub]);

  const typed = (o: CommandLeafOption, raw: string): Value => {
    if (o.type === OptionType.BOOLEAN) return raw === 'true';
    if (o.type === OptionType.STRING) return raw;
    return Number(raw);
  };
  const optionsOf = (focused?: string, typing?: string) => {
    const vals = focused === undefined ? values : { ...values, [focused]: typing ?? '' };
    const given = leaves
      .filter((o) => (vals[o.name] ?? '') !== '' || o.name === focused)
      .map((o) => ({
        name: o.name,
        value: typed(o, vals[o.name] ?? ''),
        ...(o.name === focused ? { focused: true } : {}),
      }));
    return subs.length > 0 ? [{ name: sub, options: given }] : given;
  };

  const autocomplete = async (o: CommandLeafOption, raw: string) => {
    try {
      const r = await post<{ id: number; choices?: { name: string; value: Value }[] }>(
        '/api/v1/interactions',
        {
          type: 4,
          channelId: props.log.channelId,
          commandId: c.id,
          options: optionsOf(o.name, raw),
        },
      );
      setSuggest({ name: o.name, choices: r.choices ?? [] });
    } catch {
      setSuggest(null);
    }
  };

  const run = async () => {
    const missing = leaves.filter((o) => o.required && (values[o.name] ?? '') === '');
    if (missing.length > 0) {
      setErrors(Object.fromEntries(missing.map((o) => [o.name, 'Required.'])));
      return;
    }
    setBusy(true);
    setErrors({});
    setError(null);
    try {
      const r = await post<{ id: number }>('/api/v1/interactions', {
        type: 2,
        channelId: props.log.channelId,
        commandId: c.id,
        options: optionsOf(),
      });
      props.onRan(r.id);
    } catch (x) {
      // D64: a refused option is named (options.sides, options.add.n): shown on its field
      const field = x instanceof ApiError ? x.details[0]?.field : undefined;
      const name = field?.split('.').pop();
      if (x instanceof ApiError && name && leaves.some((o) => o.name === name))
        setErrors({ [name]: x.details[0]!.problem });
      else setError(describe(x));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="command-form"
      // the fields' own checks are said on each field (and the server names a refused option)
      noValidate
      aria-label={`/${c.name} options`}
      onSubmit={(e) => {
        e.preventDefault();
        void run();
      }}
    >
      <div class="command-form-head">
        <span class="command-name">/{c.name}</span>
        <span class="muted small">
          {c.description} · {props.bot}
        </span>
      </div>
      {subs.length > 0 && (
        <label class="command-field">
          <span>sub-command</span>
          <select
            value={sub}
            onChange={(e) => {
              setSub(e.currentTarget.value);
              setValues({});
            }}
          >
            {subs.map((s) => (
              <option key={s.name} value={s.name}>
                {s.name} — {s.description}
              </option>
            ))}
          </select>
        </label>
      )}
      {leaves.map((o, i) => (
        <label class="command-field" key={`${sub}.${o.name}`}>
          <span>
            {o.name}
            {o.required && (
              <abbr class="required" title="required">
                *
              </abbr>
            )}{' '}
            <span class="muted small">
              {TYPE_NAMES[o.type]} · {o.description}
            </span>
          </span>
          <OptionInput
            o={o}
            value={values[o.name] ?? ''}
            guildId={guildId}
            inputRef={i === 0 ? first : undefined}
            suggestions={suggest?.name === o.name ? suggest.choices : undefined}
            onChange={(v) => {
              setValues((vs) => ({ ...vs, [o.name]: v }));
              setErrors(({ [o.name]: _gone, ...rest }) => rest);
              if (o.autocomplete) void autocomplete(o, v);
            }}
          />
          {errors[o.name] && (
            <span class="field-error small" role="alert">
              {errors[o.name]}
            </span>
          )}
        </label>
      ))}
      {error && (
        <p class="composer-error" role="alert">
          {error}
        </p>
      )}
      <div class="command-form-actions">
        <span class="muted small">Enter runs it · Esc cancels</span>
        <button type="submit" class="btn primary" disabled={busy}>
          Run /{c.name}
        </button>
      </div>
    </form>
  );
}

function findGuild(channelId: number): number | undefined {
  for (const g of guilds.value.values())
    if (g.channels.some((ch) => ch.id === channelId)) return g.id;
  return undefined;
}

function OptionInput(props: {
  o: CommandLeafOption;
  value: string;
  guildId: number | undefined;
  inputRef: { current: HTMLElement | null } | undefined;
  suggestions: { name: string; value: Value }[] | undefined;
  onChange: (v: string) => void;
}) {
  const { o } = props;
  const ref = (el: HTMLElement | null) => {
    if (props.inputRef) props.inputRef.current = el;
  };
  const onInput = (e: Event) => props.onChange((e.currentTarget as HTMLInputElement).value);
  const pick = (options: { label: string; value: string }[]) => (
    <select ref={ref} value={props.value} required={o.required === true} onChange={onInput}>
      <option value="">{o.required ? 'Choose…' : '—'}</option>
      {options.map((x) => (
        <option key={x.value} value={x.value}>
          {x.label}
        </option>
      ))}
    </select>
  );
  if (o.choices) return pick(o.choices.map((x) => ({ label: x.name, value: String(x.value) })));
  if (o.type === OptionType.BOOLEAN)
    return pick([
      { label: 'yes', value: 'true' },
      { label: 'no', value: 'false' },
    ]);
  const g = props.guildId === undefined ? undefined : guilds.value.get(props.guildId);
  if (o.type === OptionType.USER)
    return pick(
      (props.guildId === undefined ? [] : (members.value.get(props.guildId) ?? [])).map((m) => ({
        label: m.user.name,
        value: String(m.user.id),
      })),
    );
  if (o.type === OptionType.CHANNEL)
    return pick((g?.channels ?? []).map((ch) => ({ label: `#${ch.name}`, value: String(ch.id) })));
  if (o.type === OptionType.ROLE)
    return pick((g?.roles ?? []).map((r) => ({ label: r.name, value: String(r.id) })));
  const numeric = o.type === OptionType.INTEGER || o.type === OptionType.NUMBER;
  return (
    <>
      <input
        ref={ref}
        type={numeric ? 'number' : 'text'}
        value={props.value}
        required={o.required === true}
        {...(numeric
          ? {
              step: o.type === OptionType.INTEGER ? 1 : 'any',
              ...(o.minValue !== undefined ? { min: o.minValue } : {}),
              ...(o.maxValue !== undefined ? { max: o.maxValue } : {}),
            }
          : {
              ...(o.minLength !== undefined ? { minLength: o.minLength } : {}),
              ...(o.maxLength !== undefined ? { maxLength: o.maxLength } : {}),
            })}
        autocomplete="off"
        onInput={onInput}
      />
      {props.suggestions && (
        <ul class="autocomplete" role="listbox" aria-label={`Suggestions for ${o.name}`}>
          {props.suggestions.map((s) => (
            <li key={String(s.value)}>
              <button
                type="button"
                role="option"
                aria-selected={String(s.value) === props.value}
                class="command-item"
                onClick={() => props.onChange(String(s.value))}
              >
                {s.name}
              </button>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
