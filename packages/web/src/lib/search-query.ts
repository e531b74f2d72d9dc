/**
 * D67: what a person types in the search box, read into the search route's parameters. Pure
 * (no DOM, no requests): test/unit/search-query.test.ts.
 *
 * `from:name in:#channel has:image before:2026-01-01 after:2026-01-01 pinned:true` plus free
 * words (`"phrases"` and `-word` pass through to the server, which reads them). A value may be
 * quoted (`from:"Ada L"`). An operator the app does not know stays a free word.
 */
export interface SearchFilters {
  /** the free words, as the server's `q` */
  q: string;
  from?: string;
  in?: string;
  has?: string;
  /** yyyy-mm-dd */
  before?: string;
  after?: string;
  pinned?: boolean;
  /** what could not be read (shown to the person), e.g. `before:tomorrow` */
  problems: string[];
}

export const HAS_VALUES = ['link', 'embed', 'file', 'image', 'video', 'audio'] as const;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export function parseSearch(input: string): SearchFilters {
  const out: SearchFilters = { q: '', problems: [] };
  const words: string[] = [];
  const re = /(\w+):(?:"([^"]*)"?|(\S*))|(-?"[^"]*"?)|(\S+)/gu;
  for (let m = re.exec(input); m !== null; m = re.exec(input)) {
    if (m[1] === undefined) {
      words.push(m[4] ?? m[5] ?? '');
      continue;
    }
    const key = m[1].toLowerCase();
    const value = m[2] ?? m[3] ?? '';
    switch (key) {
      case 'from':
        if (value) out.from = value.replace(/^@/, '');
        break;
      case 'in':
        if (value) out.in = value.replace(/^#/, '');
        break;
      case 'has':
        if ((HAS_VALUES as readonly string[]).includes(value.toLowerCase()))
          out.has = value.toLowerCase();
        else out.problems.push(`has:${value} (one of ${HAS_VALUES.join(', ')})`);
        break;
      case 'before':
      case 'after':
        if (validDate(value)) out[key] = value;
        else out.problems.push(`${key}:${value} (a date as yyyy-mm-dd)`);
        break;
      case 'pinned':
        if (value === 'true' || value === 'false') out.pinned = value === 'true';
        else out.problems.push(`pinned:${value} (true or false)`);
        break;
      default:
        words.push(m[0]);
    }
  }
  // Keep a trailing space: the server reads the last word as a prefix only while it is typed.
  out.q = words.join(' ') + (/\s$/u.test(input) && words.length > 0 ? ' ' : '');
  return out;
}

function validDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === s;
}

/** D3: ids carry their time (ms since 2026-01-01 UTC, shifted by 12 bits). */
const EPOCH_MS = Date.UTC(2026, 0, 1);
const TIME_SHIFT = 2 ** 12;
const DAY_MS = 86_400_000;

/** The smallest id issued at or after `ms` (0 before the epoch). */
export const idAt = (ms: number): number => Math.max(ms - EPOCH_MS, 0) * TIME_SHIFT;

/**
 * The search's id bounds for dates, as Mattermost reads them: `before:D` is before day D
 * starts, `after:D` after it ends (D itself in neither). Days are UTC.
 */
export function dateBounds(f: Pick<SearchFilters, 'before' | 'after'>): {
  before?: number;
  after?: number;
} {
  const out: { before?: number; after?: number } = {};
  if (f.before) out.before = idAt(Date.parse(`${f.before}T00:00:00Z`));
  if (f.after) out.after = Math.max(idAt(Date.parse(`${f.after}T00:00:00Z`) + DAY_MS) - 1, 0);
  return out;
}

/** The words a hit is highlighted by: the free words and phrases, not the excluded ones. */
export function highlightTerms(q: string): string[] {
  const terms: string[] = [];
  const re = /(-?)(?:"([^"]*)"?|(\S+))/gu;
  for (let m = re.exec(q); m !== null; m = re.exec(q)) {
    if (m[1] === '-') continue;
    const t = (m[2] ?? m[3] ?? '').trim();
    if (t) terms.push(t);
  }
  return terms;
}

export interface Segment {
  text: string;
  hit: boolean;
}

/**
 * The text cut into plain and matched pieces (case-insensitive, a match at the start of a word,
 * or anywhere in CJK text, which has no spaces): rendered as text nodes and <mark>s, never
 * as HTML.
 */
export function highlight(text: string, terms: readonly string[]): Segment[] {
  const lower = text.toLowerCase();
  const marks = new Array<boolean>(text.length).fill(false);
  for (const term of terms) {
    const t = term.toLowerCase();
    if (!t) continue;
    for (let i = lower.indexOf(t); i !== -1; i = lower.indexOf(t, i + 1)) {
      const before = i === 0 ? '' : (lower[i - 1] ?? '');
      const cjk = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/u.test(t[0] ?? '');
      if (cjk || !/[\p{L}\p{N}]/u.test(before)) marks.fill(true, i, i + t.length);
    }
  }
  const out: Segment[] = [];
  for (let i = 0; i < text.length; i++) {
    const hit = marks[i] ?? false;
    const last = out[out.length - 1];
    if (last && last.hit === hit) last.text += text[i];
    else out.push({ text: text[i] ?? '', hit });
  }
  return out;
}
