import { navigate } from './router.js';

/**
 * D66: the installable app. The service worker (public/sw.js) shows Web Push notifications and
 * keeps an offline shell; a click on a notification while the app is open routes here.
 */
export const pwaReady: Promise<ServiceWorkerRegistration | null> =
  typeof navigator !== 'undefined' && 'serviceWorker' in navigator
    ? navigator.serviceWorker.register('/sw.js', { scope: '/' }).then(
        async () => navigator.serviceWorker.ready,
        () => null,
      )
    : Promise.resolve(null);

if (typeof navigator !== 'undefined' && 'serviceWorker' in navigator)
  navigator.serviceWorker.addEventListener('message', (e: MessageEvent) => {
    const m = e.data as { type?: unknown; url?: unknown } | null;
    if (m?.type === 'parley:open' && typeof m.url === 'string' && /^\/(?!\/)/.test(m.url))
      navigate(m.url);
  });
