// D66: Parley's service worker — Web Push notifications and the offline shell of the
// installable app. Served from the root (scope "/") by the server like every root file of the
// build (no-cache, so a new version is found on the next load); no build step, no imports.
/* global self, caches, fetch, Response, URL */

const SHELL = 'parley-shell-v1';
/** What the app needs to start without a network (the hashed assets index.html names join). */
const SHELL_FILES = [
  '/',
  '/manifest.webmanifest',
  '/favicon.svg',
  '/icon-192.png',
  '/icon-512.png',
];
/** The server's own paths: never cached, never answered from the shell (D55 SERVER_PREFIXES). */
const SERVER = /^\/(api|app|admin|cdn|gateway|docs|openapi\.json|healthz|readyz|metrics)(\/|$)/;

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(SHELL);
      await cache.addAll(SHELL_FILES);
      // the scripts and styles the current index.html loads
      const html = await (await cache.match('/')).text();
      const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]);
      await cache.addAll(assets);
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const key of await caches.keys()) if (key !== SHELL) await caches.delete(key);
      await self.clients.claim();
    })(),
  );
});

self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET') return;
  const url = new URL(req.url);
  if (url.origin !== self.location.origin || SERVER.test(url.pathname)) return;
  if (req.mode === 'navigate') {
    // Online: the network (a new build at once); offline: the shell, whose router draws the page.
    event.respondWith(
      fetch(req).then(
        (res) => {
          if (res.ok && url.pathname === '/') {
            const copy = res.clone();
            void caches.open(SHELL).then((c) => c.put('/', copy));
          }
          return res;
        },
        async () => (await caches.match('/')) ?? Response.error(),
      ),
    );
    return;
  }
  if (SHELL_FILES.includes(url.pathname)) {
    // the shell's other files (icons, manifest): the network, else the cached copy
    event.respondWith(
      fetch(req).catch(async () => (await caches.match(url.pathname)) ?? Response.error()),
    );
    return;
  }
  if (url.pathname.startsWith('/assets/')) {
    // content-hashed: a cached copy is always right
    event.respondWith(
      caches.match(req).then(
        (hit) =>
          hit ??
          fetch(req).then((res) => {
            if (res.ok) {
              const copy = res.clone();
              void caches.open(SHELL).then((c) => c.put(req, copy));
            }
            return res;
          }),
      ),
    );
  }
});

/** The payload (D66): {title, body, url, tag}, decrypted by the browser. */
function readPayload(data) {
  try {
    const p = data ? data.json() : {};
    return typeof p === 'object' && p !== null ? p : {};
  } catch {
    return {};
  }
}

/** Only the app's own paths are opened (`/g/…`, `/dm/…`), never another site. */
const safePath = (u) => (typeof u === 'string' && /^\/(?!\/)/.test(u) ? u : '/');

self.addEventListener('push', (event) => {
  const p = readPayload(event.data);
  event.waitUntil(
    self.registration.showNotification(typeof p.title === 'string' ? p.title : 'Parley', {
      body: typeof p.body === 'string' ? p.body : '',
      tag: typeof p.tag === 'string' ? p.tag : undefined,
      renotify: typeof p.tag === 'string',
      icon: '/icon-192.png',
      badge: '/maskable-192.png',
      data: { url: safePath(p.url) },
    }),
  );
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const url = safePath(event.notification.data && event.notification.data.url);
  event.waitUntil(
    (async () => {
      const wins = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
      const win = wins.find((w) => new URL(w.url).origin === self.location.origin);
      if (win) {
        // the open app routes there itself (lib/pwa.ts), keeping its state
        win.postMessage({ type: 'parley:open', url });
        await win.focus();
        return;
      }
      await self.clients.openWindow(url);
    })(),
  );
});
