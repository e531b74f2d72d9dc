import { Permission } from '@parley/protocol';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, del, describe, get, patch, post, put } from '../lib/api.js';
import { navigate, onLinkClick } from '../lib/router.js';
import type {
  CreatedBot,
  Delivery,
  DeliveryDetail,
  DeliveryState,
  OwnedBot,
  UploadQuota,
} from '../lib/types.js';
import { guildList } from '../state/store.js';
import { Avatar, Confirm, CopyButton, Dialog, Field, Spinner, val } from '../ui/kit.js';
import { Icon } from '../ui/icons.js';
import { toast } from '../ui/toast.js';
import { whenPrecise } from '../lib/time.js';

/** D50 / docs/interface.md#bots-per-account: 3. */
const MAX_BOTS = 3;

/** A secret shown once, with a copy button. */
function Secret(props: { label: string; value: string; note: string }) {
  return (
    <div class="secret" role="group" aria-label={props.label}>
      <p class="small">
        <strong>{props.label}</strong> — {props.note}
      </p>
      <div class="secret-row">
        <code class="secret-value" data-testid="secret-value">
          {props.value}
        </code>
        <CopyButton text={props.value} />
      </div>
    </div>
  );
}

// A token just created or reset lives here until the page is left: "shown once".
const freshTokens = new Map<number, string>();

export function BotsPage() {
  const [bots, setBots] = useState<OwnedBot[] | null>(null);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [err, setErr] = useState<ApiError | string | null>(null);
  const load = useCallback(() => {
    get<{ bots: OwnedBot[] }>('/app/v1/bots')
      .then((r) => setBots(r.bots))
      .catch((x) => toast(describe(x)));
  }, []);
  useEffect(load, [load]);

  const create = async (e: Event) => {
    e.preventDefault();
    setErr(null);
    try {
      const body: Record<string, string> = { name: name.trim() };
      if (description.trim()) body['description'] = description.trim();
      const r = await post<CreatedBot>('/app/v1/bots', body);
      freshTokens.set(r.bot.id, r.token);
      navigate(`/bots/${r.bot.id}`);
    } catch (x) {
      setErr(x instanceof ApiError ? x : describe(x));
    }
  };
  if (!bots) return <Spinner />;
  const full = bots.length >= MAX_BOTS;
  const apiErr = err instanceof ApiError ? err : null;
  return (
    <div class="page">
      <section class="card">
        <h2>
          My bots{' '}
          <span class="muted">
            ({bots.length} of {MAX_BOTS})
          </span>
        </h2>
        {bots.length === 0 && <p class="muted">No bots yet.</p>}
        <ul class="bot-list">
          {bots.map((b) => (
            <li key={b.bot.id}>
              <a
                href={`/bots/${b.bot.id}`}
                class="bot-row"
                onClick={(e) => onLinkClick(e, `/bots/${b.bot.id}`)}
              >
                <Avatar name={b.bot.name} id={b.bot.id} url={b.bot.avatar} size={40} />
                <span>
                  <strong>{b.bot.name}</strong>
                  <span class="muted small block">{b.bot.description || 'No description'}</span>
                </span>
                <span class="muted small">
                  {b.guilds.length} {b.guilds.length === 1 ? 'guild' : 'guilds'}
                  {b.webhookUrl ? ' · webhook' : ''}
                </span>
              </a>
            </li>
          ))}
        </ul>
      </section>
      <section class="card">
        <h2>Create a bot</h2>
        {full ? (
          <p class="banner">
            You have {MAX_BOTS} bots, the most an account may have. Delete one to create another.
          </p>
        ) : (
          <form onSubmit={create} class="form">
            {typeof err === 'string' && (
              <p class="banner error" role="alert">
                {err}
              </p>
            )}
            {apiErr && !apiErr.field('name') && !apiErr.field('description') && (
              <p class="banner error" role="alert">
                {apiErr.message}
              </p>
            )}
            <Field label="Bot name" error={apiErr?.field('name')}>
              {(id, d) => (
                <input
                  id={id}
                  aria-describedby={d}
                  required
                  maxLength={100}
                  value={name}
                  onInput={(e) => setName(val(e))}
                />
              )}
            </Field>
            <Field label="Description (optional)" error={apiErr?.field('description')}>
              {(id, d) => (
                <input
                  id={id}
                  aria-describedby={d}
                  value={description}
                  onInput={(e) => setDescription(val(e))}
                />
              )}
            </Field>
            <button class="btn primary" type="submit">
              Create bot
            </button>
          </form>
        )}
      </section>
    </div>
  );
}

function QuotaBars({ q }: { q: UploadQuota }) {
  const bar = (label: string, used: number, limit: number) => {
    const pct = limit > 0 ? Math.min(100, (used / limit) * 100) : 0;
    return (
      <div class="quota">
        <div class="quota-label small">
          <span>{label}</span>
          <span class="muted">
            {bytes(used)} of {bytes(limit)}
          </span>
        </div>
        <div
          class="bar"
          role="meter"
          aria-label={`${label} upload quota`}
          aria-valuemin={0}
          aria-valuemax={limit}
          aria-valuenow={used}
        >
          <span style={{ width: `${pct}%` }} />
        </div>
      </div>
    );
  };
  return (
    <>
      {bar('Today', q.dailyUsed, q.dailyLimit)}
      {bar('This month', q.monthlyUsed, q.monthlyLimit)}
    </>
  );
}

function bytes(n: number): string {
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${u[i]}`;
}

const STATES: Array<DeliveryState | 'all'> = ['all', 'pending', 'delivered', 'failed'];

function Deliveries({ botId, hasWebhook }: { botId: number; hasWebhook: boolean }) {
  const [list, setList] = useState<Delivery[] | null>(null);
  const [state, setState] = useState<DeliveryState | 'all'>('all');
  const [live, setLive] = useState(true);
  const [detail, setDetail] = useState<DeliveryDetail | null>(null);
  const load = useCallback(() => {
    get<{ deliveries: Delivery[] }>(`/app/v1/bots/${botId}/deliveries`)
      .then((r) => setList(r.deliveries))
      .catch(() => {});
  }, [botId]);
  useEffect(() => {
    load();
    if (!live) return;
    // Live refresh: every 3 s while the page is shown (1 request per 3 s is far inside D25).
    const t = setInterval(() => {
      if (document.visibilityState === 'visible') load();
    }, 3000);
    return () => clearInterval(t);
  }, [load, live]);

  const open = async (d: Delivery) => {
    try {
      setDetail(await get<DeliveryDetail>(`/app/v1/bots/${botId}/deliveries/${d.id}`));
    } catch (x) {
      toast(describe(x));
    }
  };
  const redeliver = async (id: number) => {
    try {
      await post(`/app/v1/bots/${botId}/deliveries/${id}/redeliver`);
      toast('Queued for redelivery', 'info');
      setDetail(null);
      load();
    } catch (x) {
      toast(describe(x));
    }
  };
  const shown = (list ?? []).filter((d) => state === 'all' || d.state === state);
  return (
    <section class="card" aria-labelledby="deliveries-h">
      <div class="card-head">
        <h2 id="deliveries-h">Deliveries</h2>
        <label class="inline small push">
          <span>State</span>
          <select value={state} onChange={(e) => setState(val(e) as DeliveryState | 'all')}>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label class="inline small">
          <input
            type="checkbox"
            checked={live}
            onChange={(e) => setLive(e.currentTarget.checked)}
          />
          <span>Live</span>
        </label>
        <button type="button" class="icon-btn" aria-label="Refresh deliveries" onClick={load}>
          <Icon name="refresh" size={16} />
        </button>
      </div>
      {!hasWebhook && <p class="muted small">Set a webhook address to receive deliveries.</p>}
      {list === null ? (
        <Spinner />
      ) : shown.length === 0 ? (
        <p class="muted">No deliveries{state === 'all' ? '' : ` in state ${state}`}.</p>
      ) : (
        <div class="table-wrap">
          <table class="table">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Event</th>
                <th scope="col">State</th>
                <th scope="col">Status</th>
                <th scope="col">Latency</th>
                <th scope="col">Attempts</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {shown.map((d) => (
                <tr key={d.id} data-state={d.state}>
                  <td title={whenPrecise(d.createdAt)}>
                    {new Date(d.createdAt).toLocaleTimeString()}
                  </td>
                  <td>
                    <code>{d.type}</code>
                  </td>
                  <td>
                    <span class={`pill ${d.state}`}>{d.state}</span>
                  </td>
                  <td>{d.lastStatus ?? (d.lastError ? 'error' : '—')}</td>
                  <td>{d.lastLatencyMs != null ? `${d.lastLatencyMs} ms` : '—'}</td>
                  <td>{d.attempts}</td>
                  <td>
                    <button type="button" class="btn small" onClick={() => void open(d)}>
                      Details
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Dialog title="Delivery" open={detail !== null} onClose={() => setDetail(null)} wide>
        {detail && (
          <div>
            <p class="small">
              <code>{detail.type}</code> ·{' '}
              <span class={`pill ${detail.state}`}>{detail.state}</span> · id{' '}
              <code>{detail.deliveryId}</code>
            </p>
            <ol class="attempts">
              {detail.attempts.map((a, i) => (
                <li key={i} class="attempt">
                  <p>
                    <strong>Attempt {i + 1}</strong> · {whenPrecise(a.at)} · status{' '}
                    <strong class="attempt-status">{a.status ?? '—'}</strong> · latency{' '}
                    <strong class="attempt-latency">
                      {a.latencyMs != null ? `${a.latencyMs} ms` : '—'}
                    </strong>
                  </p>
                  {a.error && <p class="field-error">{a.error}</p>}
                  {a.responseBody != null && a.responseBody !== '' && (
                    <pre class="response-body" aria-label={`Answer body of attempt ${i + 1}`}>
                      {a.responseBody}
                    </pre>
                  )}
                </li>
              ))}
            </ol>
            <div class="actions">
              <button type="button" class="btn primary" onClick={() => void redeliver(detail.id)}>
                Redeliver
              </button>
            </div>
          </div>
        )}
      </Dialog>
    </section>
  );
}

export function BotDetail({ botId }: { botId: number }) {
  const [owned, setOwned] = useState<OwnedBot | null | 'missing'>(null);
  const [token, setTokenShown] = useState<string | null>(() => freshTokens.get(botId) ?? null);
  const [confirm, setConfirm] = useState<'reset' | 'delete' | 'rotate' | null>(null);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [avatar, setAvatar] = useState('');
  const [profileErr, setProfileErr] = useState<ApiError | null>(null);
  const [hook, setHook] = useState('');
  const [hookErr, setHookErr] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [quota, setQuota] = useState<UploadQuota | null>(null);
  const [addGuild, setAddGuild] = useState('');

  const load = useCallback(async () => {
    try {
      const r = await get<{ bots: OwnedBot[] }>('/app/v1/bots');
      const b = r.bots.find((x) => x.bot.id === botId);
      setOwned(b ?? 'missing');
      if (b) {
        setName(b.bot.name);
        setDescription(b.bot.description);
        setAvatar(b.bot.avatar.endsWith('/cdn/avatars/default.png') ? '' : b.bot.avatar);
        setHook(b.webhookUrl ?? '');
      }
    } catch (x) {
      toast(describe(x));
    }
    get<UploadQuota>(`/app/v1/bots/${botId}/quota`)
      .then(setQuota)
      .catch(() => {});
  }, [botId]);
  useEffect(() => {
    void load();
    // Shown once: leaving the page forgets it.
    return () => freshTokens.delete(botId);
  }, [load, botId]);

  if (owned === null) return <Spinner />;
  if (owned === 'missing') return <p class="page muted">No such bot.</p>;
  const b = owned.bot;
  const adminGuilds = guildList.value.filter(
    (g) => (g.myPermissions & Permission.ADMINISTRATOR) !== 0 && !owned.guilds.includes(g.id),
  );

  const saveProfile = async (e: Event) => {
    e.preventDefault();
    setProfileErr(null);
    try {
      await patch(`/app/v1/bots/${botId}`, {
        name: name.trim(),
        description,
        avatar: avatar.trim() === '' ? null : avatar.trim(),
      });
      toast('Saved', 'info');
      await load();
    } catch (x) {
      if (x instanceof ApiError) setProfileErr(x);
      else toast(describe(x));
    }
  };
  const saveHook = async (e: Event) => {
    e.preventDefault();
    setHookErr(null);
    try {
      if (hook.trim() === '') {
        await del(`/app/v1/bots/${botId}/webhook`);
        setSecret(null);
      } else {
        // D41/D50: the answer carries the bot's current signing secret.
        const r = await put<{ url: string; secret: string }>(`/app/v1/bots/${botId}/webhook`, {
          url: hook.trim(),
        });
        setSecret(r.secret);
      }
      toast('Webhook saved', 'info');
      await load();
    } catch (x) {
      // D37: the server says why the address is refused; it goes on the field.
      setHookErr(x instanceof ApiError ? (x.field('url') ?? x.message) : describe(x));
    }
  };
  const showSecret = async () => {
    try {
      const r = await put<{ url: string; secret: string }>(`/app/v1/bots/${botId}/webhook`, {
        url: owned.webhookUrl,
      });
      setSecret(r.secret);
    } catch (x) {
      toast(describe(x));
    }
  };

  return (
    <div class="page">
      <p>
        <a href="/bots" class="back" onClick={(e) => onLinkClick(e, '/bots')}>
          <Icon name="back" size={16} /> My bots
        </a>
      </p>
      <section class="card">
        <div class="card-head">
          <Avatar name={b.name} id={b.id} url={b.avatar} size={48} />
          <h2>{b.name}</h2>
          <span class="tag">BOT</span>
          <span class="muted small">
            bot id {b.id} · user id {b.botUser.id}
          </span>
        </div>
        {token ? (
          <Secret
            label="Token"
            value={token}
            note="copy it now: it is shown only once. Your bot sends it as Authorization: Bearer."
          />
        ) : (
          <p class="muted small">The token was shown when it was made. Lost it? Reset it.</p>
        )}
        <div class="actions left">
          <button type="button" class="btn" onClick={() => setConfirm('reset')}>
            Reset token
          </button>
        </div>
      </section>

      <section class="card">
        <h2>Webhook</h2>
        <form class="form" onSubmit={saveHook} noValidate>
          <Field
            label="Webhook URL"
            error={hookErr ?? undefined}
            hint="Every event is POSTed here, signed with the secret (X-Service-Signature). Empty to turn off."
          >
            {(id, d) => (
              <input
                id={id}
                aria-describedby={d}
                aria-invalid={hookErr !== null}
                type="url"
                placeholder="https://example.com/parley"
                value={hook}
                onInput={(e) => setHook(val(e))}
              />
            )}
          </Field>
          <div class="actions left">
            <button class="btn primary" type="submit">
              Save webhook
            </button>
            {owned.webhookUrl && (
              <>
                <button
                  type="button"
                  class="btn"
                  onClick={() =>
                    post(`/app/v1/bots/${botId}/webhook/test`)
                      .then(() => toast('Test event sent', 'info'))
                      .catch((x) => toast(describe(x)))
                  }
                >
                  Send test event
                </button>
                <button type="button" class="btn" onClick={() => void showSecret()}>
                  Show secret
                </button>
                <button type="button" class="btn" onClick={() => setConfirm('rotate')}>
                  Rotate secret
                </button>
              </>
            )}
          </div>
        </form>
        {secret && (
          <Secret
            label="Signing secret"
            value={secret}
            note="HMAC-SHA256 key of X-Service-Signature and of the Standard Webhooks webhook-signature."
          />
        )}
        {secret && /[-_]/.test(secret.slice('whsec_'.length)) && (
          // D68: a secret from before Standard Webhooks is base64url, which third-party
          // verifiers do not decode; rotating gives one in standard base64.
          <p class="small" role="note" data-testid="secret-rotate-note">
            This secret predates Standard Webhooks signatures: rotate it before verifying deliveries
            with a Standard Webhooks library.
          </p>
        )}
      </section>

      <Deliveries botId={botId} hasWebhook={owned.webhookUrl !== null} />

      <section class="card">
        <h2>Upload quota</h2>
        {quota ? <QuotaBars q={quota} /> : <Spinner />}
      </section>

      <section class="card">
        <h2>Guilds</h2>
        <p class="small muted">
          In {owned.guilds.length} {owned.guilds.length === 1 ? 'guild' : 'guilds'}
          {owned.guilds.length
            ? `: ${owned.guilds.map((id) => guildList.value.find((g) => g.id === id)?.name ?? id).join(', ')}`
            : ''}
        </p>
        {adminGuilds.length > 0 ? (
          <form
            class="form row"
            onSubmit={async (e) => {
              e.preventDefault();
              if (!addGuild) return;
              try {
                await put(`/app/v1/guilds/${addGuild}/bots/${botId}`, {});
                toast('Bot added', 'info');
                setAddGuild('');
                await load();
              } catch (x) {
                toast(describe(x));
              }
            }}
          >
            <label class="inline">
              <span>Add to guild</span>
              <select value={addGuild} onChange={(e) => setAddGuild(val(e))}>
                <option value="">Choose a guild…</option>
                {adminGuilds.map((g) => (
                  <option key={g.id} value={g.id}>
                    {g.name}
                  </option>
                ))}
              </select>
            </label>
            <button class="btn primary" type="submit" disabled={!addGuild}>
              Add bot
            </button>
          </form>
        ) : (
          <p class="small muted">You administer no other guild to add it to.</p>
        )}
      </section>

      <section class="card">
        <h2>Profile</h2>
        <form class="form" onSubmit={saveProfile} noValidate>
          {profileErr && !profileErr.details.length && (
            <p class="banner error" role="alert">
              {profileErr.message}
            </p>
          )}
          <Field label="Name" error={profileErr?.field('name')}>
            {(id, d) => (
              <input id={id} aria-describedby={d} value={name} onInput={(e) => setName(val(e))} />
            )}
          </Field>
          <Field label="Description" error={profileErr?.field('description')}>
            {(id, d) => (
              <input
                id={id}
                aria-describedby={d}
                value={description}
                onInput={(e) => setDescription(val(e))}
              />
            )}
          </Field>
          <Field
            label="Avatar URL"
            error={profileErr?.field('avatar')}
            hint="An uploaded image's address, or empty for the default"
          >
            {(id, d) => (
              <input
                id={id}
                aria-describedby={d}
                type="url"
                value={avatar}
                onInput={(e) => setAvatar(val(e))}
              />
            )}
          </Field>
          <button class="btn primary" type="submit">
            Save profile
          </button>
        </form>
      </section>

      <section class="card danger-zone">
        <h2>Delete</h2>
        <button type="button" class="btn danger" onClick={() => setConfirm('delete')}>
          Delete bot
        </button>
      </section>

      <Confirm
        open={confirm === 'reset'}
        title="Reset the token?"
        body={
          <p>
            The current token stops working <strong>at once</strong>: every program using it gets
            401 and its gateway connection is closed. You will see the new token once.
          </p>
        }
        confirm="Reset token"
        danger
        onConfirm={async () => {
          try {
            const r = await post<{ token: string }>(`/app/v1/bots/${botId}/token`);
            setTokenShown(r.token);
          } catch (x) {
            toast(describe(x));
          }
          setConfirm(null);
        }}
        onClose={() => setConfirm(null)}
      />
      <Confirm
        open={confirm === 'rotate'}
        title="Rotate the signing secret?"
        body={<p>Deliveries are signed with the new secret from now on; update your receiver.</p>}
        confirm="Rotate secret"
        danger
        onConfirm={async () => {
          try {
            const r = await post<{ secret: string }>(`/app/v1/bots/${botId}/webhook/secret`);
            setSecret(r.secret);
          } catch (x) {
            toast(describe(x));
          }
          setConfirm(null);
        }}
        onClose={() => setConfirm(null)}
      />
      <Confirm
        open={confirm === 'delete'}
        title={`Delete ${b.name}?`}
        body={
          <p>
            Its token dies, its connection closes and it leaves every guild. This cannot be undone.
          </p>
        }
        confirm="Delete bot"
        danger
        onConfirm={async () => {
          try {
            await del(`/app/v1/bots/${botId}`);
            navigate('/bots', true);
          } catch (x) {
            toast(describe(x));
          }
          setConfirm(null);
        }}
        onClose={() => setConfirm(null)}
      />
    </div>
  );
}
