import { signal } from '@preact/signals';

/** Client-side routes (D55: the server answers every such path with the app). */
export const path = signal(location.pathname + location.search);

export function navigate(to: string, replace = false): void {
  if (to === path.value) return;
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  path.value = to;
}

addEventListener('popstate', () => {
  path.value = location.pathname + location.search;
});

/** `/g/:guildId/:channelId` → {guildId, channelId}; undefined when the pattern does not fit. */
export function match(pattern: string, p: string): Record<string, string> | undefined {
  const pp = pattern.split('/');
  const parts = (p.split('?')[0] ?? '').split('/');
  if (pp.length !== parts.length) return undefined;
  const out: Record<string, string> = {};
  for (let i = 0; i < pp.length; i++) {
    const a = pp[i] ?? '';
    const b = parts[i] ?? '';
    if (a.startsWith(':')) {
      if (b === '') return undefined;
      out[a.slice(1)] = decodeURIComponent(b);
    } else if (a !== b) return undefined;
  }
  return out;
}

/** A link that routes in the page (and still works as a link: new tab, copy address). */
export function onLinkClick(e: MouseEvent, to: string): void {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey)
    return;
  e.preventDefault();
  navigate(to);
}
