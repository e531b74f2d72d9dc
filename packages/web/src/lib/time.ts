/**
 * How the web app writes a moment: one form everywhere a person reads one ("Nov 27, 2026,
 * 10:54 AM" in their locale), seconds only where they matter (a webhook delivery's tries).
 * Tooltips keep the full local form.
 */
export const when = (iso: string | number): string =>
  new Date(iso).toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });

/** With seconds: retries seconds apart must be told apart. */
export const whenPrecise = (iso: string | number): string =>
  new Date(iso).toLocaleString([], { dateStyle: 'medium', timeStyle: 'medium' });

/** A day: "Nov 27, 2026". */
export const day = (iso: string | number): string =>
  new Date(iso).toLocaleDateString([], { dateStyle: 'medium' });

/** A time of day: "10:54 AM". */
export const clock = (iso: string | number): string =>
  new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
