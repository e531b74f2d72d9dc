/**
 * D67: the one text normalization of search, used for what is indexed and for what is asked,
 * on both dialects (SQLite's index gets this function's output; PostgreSQL's index expression
 * is its SQL twin, `parley_search_text` in storage/migrations/0055-search.ts, and the shared
 * suite test/http/search.test.ts holds the two to the same answers).
 *
 * - ASCII punctuation becomes a space, so both tokenizers (FTS5's unicode61 and PostgreSQL's
 *   default parser under the 'simple' configuration) see the same plain words: PostgreSQL's
 *   parser would otherwise keep `example.com`, `foo-bar` or `a@b.c` whole, where unicode61
 *   splits them.
 * - Every CJK character (Han, kana, Hangul) stands alone between spaces: these scripts write no
 *   spaces between words, so each character is indexed as a token and a word of one or two
 *   characters is found too (a trigram index would miss those); a CJK word of the query is
 *   matched as a phrase of its characters.
 */

/** CJK ranges, the same on both dialects (the SQL twin lists these exact ranges). */
export const CJK_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x1100, 0x11ff], // Hangul Jamo
  [0x3040, 0x30ff], // Hiragana, Katakana
  [0x3130, 0x318f], // Hangul compatibility Jamo
  [0x31f0, 0x31ff], // Katakana phonetic extensions
  [0x3400, 0x4dbf], // CJK extension A
  [0x4e00, 0x9fff], // CJK unified ideographs
  [0xac00, 0xd7af], // Hangul syllables
  [0xf900, 0xfaff], // CJK compatibility ideographs
  [0xff66, 0xff9f], // halfwidth Katakana
  [0x20000, 0x2fa1f], // CJK extensions B–F, compatibility supplement
];

const hex = (n: number): string =>
  n > 0xffff ? `\\u{${n.toString(16)}}` : `\\u${n.toString(16).padStart(4, '0')}`;

const CJK = new RegExp(`[${CJK_RANGES.map(([a, b]) => `${hex(a)}-${hex(b)}`).join('')}]`, 'gu');
const ASCII_PUNCT = /[!-/:-@[-`{-~]/g;

/** The text as indexed (and as a query's words are read). */
export function searchText(text: string): string {
  return text.replace(ASCII_PUNCT, ' ').replace(CJK, ' $& ');
}

/**
 * The tokens of a piece of text as both indexes see them: runs of letters, marks and digits
 * (what unicode61 and PostgreSQL's parser keep; spaces, symbols and emoji separate them).
 */
export function searchTokens(text: string): string[] {
  return searchText(text)
    .split(/[^\p{L}\p{M}\p{N}\p{Co}]+/u)
    .filter((t) => t !== '');
}

/** One term of a query: its tokens, matched as a phrase (in order, adjacent). */
export interface Term {
  tokens: string[];
  /** the last token matches as a prefix (D67: the query's last word) */
  prefix: boolean;
}

export interface ParsedQuery {
  /** all must match */
  must: Term[];
  /** none may match (`-word`, `-"a phrase"`) */
  not: Term[];
}

/**
 * D67's `q`: words (all must match; the last one, when it ends the query, as a prefix),
 * `"phrases"` (an unclosed quote runs to the end), `-word` and `-"phrase"` exclusions. A term
 * without any indexable character (punctuation, emoji) is dropped.
 */
export function parseQuery(q: string): ParsedQuery {
  const must: Term[] = [];
  const not: Term[] = [];
  const re = /(-?)(?:"([^"]*)"?|(\S+))/gu;
  let last: { term: Term; word: boolean; end: number } | undefined;
  for (let m = re.exec(q); m !== null; m = re.exec(q)) {
    const negative = m[1] === '-';
    const word = m[3] !== undefined;
    const raw = m[2] ?? m[3] ?? '';
    const tokens = searchTokens(raw);
    if (tokens.length === 0) continue;
    const term: Term = { tokens, prefix: false };
    (negative ? not : must).push(term);
    last = negative ? undefined : { term, word, end: m.index + m[0].length };
  }
  // The query's last word is a prefix while it is still being typed: not when a space follows
  // it (the person finished it), nor a phrase or an exclusion.
  if (last && last.word && last.end === q.length) last.term.prefix = true;
  return { must, not };
}

/** SQLite FTS5's MATCH expression of terms joined by `op` (tokens hold no `"` after searchText). */
export function fts5Expression(terms: readonly Term[], op: 'AND' | 'OR'): string {
  return terms.map((t) => `"${t.tokens.join(' ')}"${t.prefix ? ' *' : ''}`).join(` ${op} `);
}

/** PostgreSQL's tsquery text (for `to_tsquery('simple', …)`): phrases with `<->`, `:*` prefix. */
export function tsqueryText(q: ParsedQuery): string {
  const phrase = (t: Term): string =>
    `(${t.tokens.map((tok, i) => `'${tok}'${t.prefix && i === t.tokens.length - 1 ? ':*' : ''}`).join(' <-> ')})`;
  return [...q.must.map(phrase), ...q.not.map((t) => `!${phrase(t)}`)].join(' & ');
}
