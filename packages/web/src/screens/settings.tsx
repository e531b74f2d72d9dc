import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, del, describe, get, patch, post, upload } from '../lib/api.js';
import type { Session, User } from '../lib/types.js';
import { describeAgent } from '../lib/user-agent.js';
import { dispatch, logout, me } from '../state/store.js';
import { Avatar, Field, Spinner, val } from '../ui/kit.js';
import { toast } from '../ui/toast.js';
import { NotificationsSection } from './notifications-settings.js';
import { authConfig, oidcLink, SsoSettings, WithPasswords } from './sso.js';
import { when } from '../lib/time.js';

export function SettingsPage() {
  const u = me.value;
  if (!u) return null;
  return (
    <div class="page">
      <Profile u={u} />
      {/* D69: no password card while the server takes no passwords */}
      <WithPasswords>
        <Password />
      </WithPasswords>
      <SsoSettings />
      <Sessions />
      <NotificationsSection />
      <YourData />
      <section class="card">
        <h2>Log out</h2>
        <button type="button" class="btn" onClick={() => void logout()}>
          Log out of this device
        </button>
      </section>
    </div>
  );
}

function Profile({ u }: { u: User }) {
  const [name, setName] = useState(u.name);
  const [err, setErr] = useState<ApiError | null>(null);
  const save = async (body: Record<string, unknown>) => {
    setErr(null);
    try {
      dispatch({ type: 'ME', d: await patch<User>('/app/v1/users/@me', body) });
      toast('Saved', 'info');
    } catch (x) {
      if (x instanceof ApiError) setErr(x);
      else toast(describe(x));
    }
  };
  return (
    <section class="card">
      <h2>Profile</h2>
      <div class="row">
        <Avatar name={u.name} id={u.id} url={u.avatar} size={56} />
        <label class="btn">
          <span>Upload an avatar</span>
          <input
            type="file"
            accept=".png,.jpg,.jpeg,.gif,image/png,image/jpeg,image/gif"
            class="sr-only"
            onChange={async (e) => {
              const f = e.currentTarget.files?.[0];
              e.currentTarget.value = '';
              if (!f) return;
              try {
                const up = await upload(f);
                await save({ avatar: up.url }); // D48: a {cdn_url} upload
              } catch (x) {
                toast(describe(x));
              }
            }}
          />
        </label>
        <button type="button" class="btn" onClick={() => void save({ avatar: null })}>
          Use the default avatar
        </button>
      </div>
      <form
        class="form"
        onSubmit={(e) => {
          e.preventDefault();
          void save({ name: name.trim() });
        }}
      >
        <Field
          // the name is the login only for a person who has a password to log in with
          label={
            oidcLink.value?.hasPassword === false
              ? 'Display name'
              : 'Display name (also your login)'
          }
          error={err ? (err.field('name') ?? err.message) : undefined}
        >
          {(id, d) => (
            <input id={id} aria-describedby={d} value={name} onInput={(e) => setName(val(e))} />
          )}
        </Field>
        <button class="btn primary" type="submit">
          Save name
        </button>
      </form>
    </section>
  );
}

function Password() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [err, setErr] = useState<ApiError | null>(null);
  const link = oidcLink.value;
  // D69: with a provider, wait for the link (it says whether there is a password at all)
  if (authConfig.value?.oidc && link === undefined) return null;
  if (link?.hasPassword === false)
    return (
      <section class="card" data-testid="no-password">
        <h2>Password</h2>
        <p class="muted">
          You sign in with {link.name}: this account has no password. If you want one as well, ask
          this server's operator to set it; you can then change it here.
        </p>
      </section>
    );
  return (
    <section class="card">
      <h2>Password</h2>
      <form
        class="form"
        onSubmit={async (e) => {
          e.preventDefault();
          setErr(null);
          try {
            await post('/app/v1/users/@me/password', { current, password: next });
            setCurrent('');
            setNext('');
            toast('Password changed; your other sessions were signed out', 'info');
          } catch (x) {
            if (x instanceof ApiError) setErr(x);
            else toast(describe(x));
          }
        }}
      >
        {err && !err.field('password') && !err.field('current') && (
          <p class="banner error" role="alert">
            {err.code === 'UNAUTHORIZED' ? 'The current password is wrong.' : err.message}
          </p>
        )}
        <Field label="Current password" error={err?.field('current')}>
          {(id, d) => (
            <input
              id={id}
              aria-describedby={d}
              type="password"
              autocomplete="current-password"
              value={current}
              onInput={(e) => setCurrent(val(e))}
            />
          )}
        </Field>
        <Field
          label="New password"
          error={err?.field('password')}
          hint="8 characters or more; other sessions are signed out"
        >
          {(id, d) => (
            <input
              id={id}
              aria-describedby={d}
              type="password"
              autocomplete="new-password"
              value={next}
              onInput={(e) => setNext(val(e))}
            />
          )}
        </Field>
        <button class="btn primary" type="submit">
          Change password
        </button>
      </form>
    </section>
  );
}

/**
 * Issue 28: take one's data along — a zip of the profile, memberships, own messages, DMs and
 * uploads. A plain link: the browser sends the session cookie (D70) and saves the download.
 */
function YourData() {
  return (
    <section class="card">
      <h2>Your data</h2>
      <p class="muted small">
        A zip of your profile, your guild memberships, the messages you wrote, your direct messages
        and the files you uploaded (JSON lines and the files themselves).
      </p>
      <a class="btn" href="/app/v1/users/@me/export" download data-testid="export-data">
        Download my data
      </a>
    </section>
  );
}

function Sessions() {
  const [list, setList] = useState<Session[] | null>(null);
  const load = useCallback(() => {
    get<{ sessions: Session[] }>('/app/v1/sessions')
      .then((r) => setList(r.sessions))
      .catch((x) => toast(describe(x)));
  }, []);
  useEffect(load, [load]);
  return (
    <section class="card">
      <h2>Sessions</h2>
      {list === null ? (
        <Spinner />
      ) : (
        <ul class="admin-list">
          {list.map((s) => (
            <li key={s.id} class="admin-row">
              <div class="row">
                <span class="grow">
                  <strong title={s.userAgent}>{describeAgent(s.userAgent)}</strong>
                  {s.current && <span class="tag">this device</span>}
                  <span class="muted small block">
                    since {when(s.createdAt)} · last used {when(s.lastUsedAt)}
                  </span>
                </span>
                <button
                  type="button"
                  class="btn small"
                  onClick={async () => {
                    if (s.current) return void logout();
                    try {
                      await del(`/app/v1/sessions/${s.id}`);
                      load();
                    } catch (x) {
                      toast(describe(x));
                    }
                  }}
                >
                  Sign out
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
