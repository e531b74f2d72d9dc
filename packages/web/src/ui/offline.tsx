/**
 * D66: the offline shell's first screen. The service worker served the app without a network and
 * the server could not be asked who we are: say so (not the login form), and start again as soon
 * as the browser is back online.
 */
export function Offline() {
  return (
    <div class="splash" role="status">
      <img src="/favicon.svg" alt="" width={40} height={40} />
      <p>
        <strong>You are offline.</strong>
      </p>
      <p class="muted">Parley will carry on as soon as the network is back.</p>
      <button type="button" class="btn" onClick={() => location.reload()}>
        Try again
      </button>
    </div>
  );
}

/** A failed fetch (no answer at all, not an HTTP error) while the browser says it is offline. */
export const isOffline = (err: unknown): boolean =>
  err instanceof TypeError && typeof navigator !== 'undefined' && !navigator.onLine;

/** Reload once the network is back (the offline screen's promise). */
export function reloadWhenOnline(): void {
  addEventListener('online', () => location.reload(), { once: true });
}
