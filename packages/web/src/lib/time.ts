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
  new Date(iso).toLocaleTimeString([], { hour: 'numeric', minute: '2-digit' });

/** The local calendar day of a moment, as a key ("2026-11-27"). */
export const dayKey = (iso: string | number): string => {
  const d = new Date(iso);
  return `${d.getFullYear()}-${d.getMonth() + 1}-${d.getDate()}`;
};

/** "Today", "Yesterday", or the day in full ("Wednesday, November 25, 2026"). */
export function dayName(iso: string | number, now = Date.now()): string {
  const k = dayKey(iso);
  if (k === dayKey(now)) return 'Today';
  const y = new Date(now);
  y.setDate(y.getDate() - 1);
  if (k === dayKey(y.getTime())) return 'Yesterday';
  return new Date(iso).toLocaleDateString([], { dateStyle: 'full' });
}

/** A message's stamp: "Today at 10:54 AM", "Yesterday at 9:02 PM", else "Nov 25, 2026 10:54 AM". */
export function stamp(iso: string | number, now = Date.now()): string {
  const d = dayName(iso, now);
  if (d === 'Today' || d === 'Yesterday') return `${d} at ${clock(iso)}`;
  return `${day(iso)} ${clock(iso)}`;
}
