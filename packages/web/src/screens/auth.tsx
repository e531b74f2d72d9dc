import { useEffect, useState } from 'preact/hooks';
import { ApiError, describe, get, post } from '../lib/api.js';
import { navigate, onLinkClick } from '../lib/router.js';
import type { AuthResult, InvitePreview } from '../lib/types.js';
import { me, startSession } from '../state/store.js';
import { Field, Spinner, val } from '../ui/kit.js';
import { SsoSignIn, WithPasswords } from './sso.js';

/**
 * D46/D70: a session begins. The server set the HttpOnly session cookie, which authenticates
 * every later call (/api/v1, /app/v1, the gateway); the token in the answer is not kept.
 */
function begin(r: AuthResult): void {
  startSession(r.user);
}

/** D70: what a login lock (429 with retryAfter) tells the person: why, and until when. */
export function lockMessage(retryAfterS: number, now = Date.now()): string {
  const until = new Date(now + retryAfterS * 1000);
  const minutes = Math.max(1, Math.ceil(retryAfterS / 60));
  const at = until.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return (
    `Too many wrong passwords for this name from your network. ` +
    `You can try again at ${at} (in ${minutes} minute${minutes === 1 ? '' : 's'}).`
  );
}

function AuthForm(props: {
  mode: 'login' | 'register';
  invite?: string | undefined;
  onDone: () => void | Promise<void>;
}) {
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [err, setErr] = useState<ApiError | string | null>(null);
  const [busy, setBusy] = useState(false);
  const register = props.mode === 'register';

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErr(null);
    try {
      const body: Record<string, string> = { name: name.trim(), password };
      if (register && props.invite) body['invite'] = props.invite;
      const r = await post<AuthResult>(`/app/v1/auth/${props.mode}`, body, { anonymous: true });
      begin(r);
      await props.onDone();
    } catch (x) {
      setErr(x instanceof ApiError ? x : describe(x));
    } finally {
      setBusy(false);
    }
  };

  const apiErr = err instanceof ApiError ? err : null;
  let banner: string | null = typeof err === 'string' ? err : null;
  if (apiErr && !apiErr.field('name') && !apiErr.field('password')) {
    banner = apiErr.message;
    if (register && apiErr.code === 'FORBIDDEN')
      banner = /closed/i.test(apiErr.message)
        ? 'Registration is closed on this server: ask its operator for an account.'
        : props.invite
          ? apiErr.message
          : 'Registration needs an invite: open the invite link someone gave you.';
    if (register && apiErr.code === 'NOT_FOUND')
      banner = 'This invite is unknown, used up or expired: ask for a new one.';
    if (apiErr.code === 'CONFLICT')
      banner = /looks/i.test(apiErr.message)
        ? 'That name looks too much like someone else’s: choose a more distinct one.'
        : 'That name is taken: choose another.';
    if (apiErr.code === 'RATE_LIMIT_EXCEEDED')
      banner =
        apiErr.retryAfter !== undefined
          ? lockMessage(apiErr.retryAfter)
          : 'Too many attempts: wait a little, then try again.';
  }

  return (
    <form class="auth-form" onSubmit={submit} noValidate>
      {banner && (
        <p class="banner error" role="alert">
          {banner}
        </p>
      )}
      <Field label="Name" error={apiErr?.field('name')}>
        {(id, d) => (
          <input
            id={id}
            aria-describedby={d}
            autocomplete="username"
            required
            minLength={2}
            maxLength={32}
            value={name}
            onInput={(e) => setName(val(e))}
          />
        )}
      </Field>
      <Field
        label="Password"
        error={apiErr?.field('password')}
        hint={register ? '8 characters or more' : undefined}
      >
        {(id, d) => (
          <input
            id={id}
            aria-describedby={d}
            type="password"
            autocomplete={register ? 'new-password' : 'current-password'}
            required
            minLength={register ? 8 : 1}
            value={password}
            onInput={(e) => setPassword(val(e))}
          />
        )}
      </Field>
      <button class="btn primary wide" type="submit" disabled={busy}>
        {busy ? 'Please wait…' : register ? 'Create account' : 'Log in'}
      </button>
    </form>
  );
}

function AuthPage(props: { title: string; children: preact.ComponentChildren }) {
  return (
    <main class="auth-page">
      <div class="auth-card">
        <div class="brand" aria-hidden="true">
          <img src="/favicon.svg" alt="" width={40} height={40} />
        </div>
        <h1>{props.title}</h1>
        {props.children}
      </div>
    </main>
  );
}

export function Login() {
  return (
    <AuthPage title="Welcome back">
      <SsoSignIn />
      <WithPasswords>
        <AuthForm mode="login" onDone={() => navigate('/', true)} />
        <p class="muted center">
          New here?{' '}
          <a href="/register" onClick={(e) => onLinkClick(e, '/register')}>
            Create an account
          </a>
        </p>
      </WithPasswords>
    </AuthPage>
  );
}

export function Register() {
  return (
    <AuthPage title="Create an account">
      <SsoSignIn />
      <WithPasswords>
        <AuthForm mode="register" onDone={() => navigate('/', true)} />
      </WithPasswords>
      <p class="muted center">
        Have an account?{' '}
        <a href="/login" onClick={(e) => onLinkClick(e, '/login')}>
          Log in
        </a>
      </p>
    </AuthPage>
  );
}

/** `/invite/:code`: who invites (D49 preview), then register or log in, and join. */
export function Invite({ code }: { code: string }) {
  const [preview, setPreview] = useState<InvitePreview | null | 'gone'>(null);
  const [mode, setMode] = useState<'register' | 'login'>('register');
  const [joinErr, setJoinErr] = useState<string | null>(null);

  useEffect(() => {
    get<InvitePreview>(`/app/v1/invites/${encodeURIComponent(code)}`, { anonymous: true })
      .then(setPreview)
      .catch(() => setPreview('gone'));
  }, [code]);

  const accept = async () => {
    setJoinErr(null);
    try {
      const r = await post<{ guildId: number }>(
        `/app/v1/invites/${encodeURIComponent(code)}/accept`,
      );
      navigate(`/g/${r.guildId}`, true);
    } catch (x) {
      setJoinErr(
        x instanceof ApiError && x.code === 'FORBIDDEN'
          ? 'You are banned from this guild.'
          : describe(x),
      );
    }
  };

  if (preview === null)
    return (
      <AuthPage title="Invitation">
        <Spinner />
      </AuthPage>
    );
  if (preview === 'gone')
    return (
      <AuthPage title="Invitation">
        <p class="banner error" role="alert">
          This invite is unknown, used up or expired. Ask for a new one.
        </p>
        <p class="center">
          <a href="/" onClick={(e) => onLinkClick(e, '/')}>
            Go to Parley
          </a>
        </p>
      </AuthPage>
    );
  const g = preview.guild;
  return (
    <AuthPage title={`Join ${g.name}`}>
      <p class="muted center">
        You are invited to <strong>{g.name}</strong> · {g.memberCount}{' '}
        {g.memberCount === 1 ? 'member' : 'members'}
      </p>
      {joinErr && (
        <p class="banner error" role="alert">
          {joinErr}
        </p>
      )}
      {me.value ? (
        <button class="btn primary wide" type="button" onClick={accept}>
          Join as {me.value.name}
        </button>
      ) : (
        <>
          <SsoSignIn invite={code} />
          <WithPasswords>
            <div class="tabs" role="tablist" aria-label="Account">
              <button
                type="button"
                role="tab"
                aria-selected={mode === 'register'}
                class={mode === 'register' ? 'on' : ''}
                onClick={() => setMode('register')}
              >
                New account
              </button>
              <button
                type="button"
                role="tab"
                aria-selected={mode === 'login'}
                class={mode === 'login' ? 'on' : ''}
                onClick={() => setMode('login')}
              >
                I have an account
              </button>
            </div>
            {mode === 'register' ? (
              // D46: registering with the invite joins its guild.
              <AuthForm mode="register" invite={code} onDone={() => navigate(`/g/${g.id}`, true)} />
            ) : (
              <AuthForm mode="login" onDone={accept} />
            )}
          </WithPasswords>
        </>
      )}
    </AuthPage>
  );
}
