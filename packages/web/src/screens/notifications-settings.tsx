import { useEffect, useState } from 'preact/hooks';
import { del, describe, get, post } from '../lib/api.js';
import { pwaReady } from '../lib/pwa.js';
import { Spinner } from '../ui/kit.js';
import { toast } from '../ui/toast.js';

/** The id of this device's subscription on the server (DELETE needs it). */
const SUB_KEY = 'parley.push.subscription';

/** base64url → the bytes `applicationServerKey` wants. */
function keyBytes(b64url: string): Uint8Array<ArrayBuffer> {
  const b64 = b64url.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  const out = new Uint8Array(new ArrayBuffer(bin.length));
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

type State =
  | { kind: 'loading' }
  | { kind: 'unsupported' }
  | { kind: 'denied' }
  | { kind: 'off' }
  | { kind: 'on' }
  | { kind: 'busy' };

const supported = (): boolean =>
  typeof window !== 'undefined' &&
  'serviceWorker' in navigator &&
  'PushManager' in window &&
  'Notification' in window;

/**
 * D66: settings → Notifications. The browser's permission is asked only when the person clicks
 * (never on load); then this device subscribes with the server's VAPID key and the subscription
 * is sent to `POST /app/v1/push-subscriptions`. Notifications come for DMs and mentions (as each
 * channel's and guild's level says) while no Parley tab is in view.
 */
export function NotificationsSection() {
  const [state, setState] = useState<State>({ kind: 'loading' });

  useEffect(() => {
    if (!supported()) return setState({ kind: 'unsupported' });
    if (Notification.permission === 'denied') return setState({ kind: 'denied' });
    void pwaReady.then(async (reg) => {
      if (!reg) return setState({ kind: 'unsupported' });
      const sub = await reg.pushManager.getSubscription();
      const known = localStorage.getItem(SUB_KEY);
      setState({
        kind: sub && known && Notification.permission === 'granted' ? 'on' : 'off',
      });
    });
  }, []);

  const enable = async (): Promise<void> => {
    setState({ kind: 'busy' });
    try {
      // D66: the permission prompt, on this click only
      const permission = await Notification.requestPermission();
      if (permission !== 'granted') {
        setState({ kind: permission === 'denied' ? 'denied' : 'off' });
        return;
      }
      const reg = await pwaReady;
      if (!reg) throw new Error('This browser cannot run the service worker notifications need');
      const { publicKey } = await get<{ publicKey: string }>(
        '/app/v1/push-subscriptions/vapid-key',
      );
      const sub =
        (await reg.pushManager.getSubscription()) ??
        (await reg.pushManager.subscribe({
          userVisibleOnly: true,
          applicationServerKey: keyBytes(publicKey),
        }));
      const created = await post<{ id: number }>('/app/v1/push-subscriptions', sub.toJSON());
      localStorage.setItem(SUB_KEY, String(created.id));
      setState({ kind: 'on' });
      toast('Notifications are on for this device', 'info');
    } catch (x) {
      setState({ kind: 'off' });
      toast(describe(x));
    }
  };

  const disable = async (): Promise<void> => {
    setState({ kind: 'busy' });
    try {
      const id = localStorage.getItem(SUB_KEY);
      localStorage.removeItem(SUB_KEY);
      if (id) await del(`/app/v1/push-subscriptions/${id}`).catch(() => {});
      const reg = await pwaReady;
      await (await reg?.pushManager.getSubscription())?.unsubscribe();
      setState({ kind: 'off' });
    } catch (x) {
      setState({ kind: 'on' });
      toast(describe(x));
    }
  };

  return (
    <section class="card" aria-labelledby="notifications-heading">
      <h2 id="notifications-heading">Notifications</h2>
      <p class="muted">
        Get a notification on this device for direct messages and mentions while Parley is not in
        view — also when no tab is open. Each channel's or server's bell sets what counts.
      </p>
      {state.kind === 'loading' || state.kind === 'busy' ? (
        <Spinner />
      ) : state.kind === 'unsupported' ? (
        <p class="muted">This browser cannot show notifications from Parley.</p>
      ) : state.kind === 'denied' ? (
        <p class="muted">
          Notifications are blocked for this site: allow them in the browser's site settings, then
          reload.
        </p>
      ) : state.kind === 'on' ? (
        <div class="row">
          <span class="grow">Notifications are on for this device.</span>
          <button type="button" class="btn" onClick={() => void disable()}>
            Turn off
          </button>
        </div>
      ) : (
        <button type="button" class="btn primary" onClick={() => void enable()}>
          Enable notifications
        </button>
      )}
    </section>
  );
}
