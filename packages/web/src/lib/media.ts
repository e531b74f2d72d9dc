import { useEffect, useState } from 'preact/hooks';

/** Wide enough for the member list beside the chat. */
export const WIDE = '(min-width: 1001px)';
/** A phone's width: the navigation becomes a drawer (the same line as styles.css's @media). */
export const PHONE = '(max-width: 760px)';
/** A screen without hover (a finger, not a mouse): what hover shows, a tap shows. */
export const TOUCH = '(hover: none)';

/** Whether a media query matches now, following the window as it is resized or turned. */
export function useMedia(query: string): boolean {
  const [matches, setMatches] = useState(() => matchMedia(query).matches);
  useEffect(() => {
    const m = matchMedia(query);
    const on = () => setMatches(m.matches);
    on();
    m.addEventListener('change', on);
    return () => m.removeEventListener('change', on);
  }, [query]);
  return matches;
}
