import MarkdownIt, { type StateInline, type Token } from 'markdown-it';

/**
 * D62: message content is Discord's markdown dialect, parsed by markdown-it (a maintained
 * CommonMark parser) configured for it. The parser only makes tokens; ui/markdown.ts turns them
 * into Preact elements from an allow-list (never HTML strings, never innerHTML), so no input
 * can add an element, an attribute or a URL scheme of its own.
 *
 * The dialect: **bold**, *italic* / _italic_, __underline__, ~~strike~~, ||spoiler||, `code`,
 * fenced blocks with a language, > quotes, # – ### headings, - and 1. lists, autolinked http(s)
 * URLs and <https://…>, [text](https://…) masked links, \ escapes, and the mentions <@id>,
 * <@&id>, <#id>, @everyone, @here. No raw HTML, no images, tables, rules, indented code,
 * reference links, entities or setext headings: they stay the text that was written.
 */
const md = new MarkdownIt('commonmark', {
  html: false,
  linkify: true,
  breaks: true,
  typographer: false,
});
md.enable(['strikethrough', 'linkify']);
md.disable([
  'code', // indented code: Discord has none (indentation stays text)
  'hr',
  'reference',
  'html_block',
  'lheading',
  'image',
  'html_inline',
  'entity', // "&amp;" stays as written, as in Discord
]);
// Only http(s) URLs become links, written out in full (no "example.com" guessing, no mailto).
md.linkify.set({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false });
for (const schema of ['ftp:', '//', 'mailto:']) md.linkify.add(schema, null);
/** the one check for every URL a message may link to */
export const safeUrl = (url: string): boolean => {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
};
md.validateLink = safeUrl;

// `|` ends a run of plain text, so the spoiler rule can see `||` (markdown-it's own list of
// characters that end a text run, plus `|`).
const TERMINATORS = new Set([
  10, 33, 35, 36, 37, 38, 42, 43, 45, 58, 60, 61, 62, 64, 91, 92, 93, 94, 95, 96, 123, 124, 125,
  126,
]);
md.inline.ruler.at('text', (state: StateInline, silent: boolean) => {
  let pos = state.pos;
  while (pos < state.posMax && !TERMINATORS.has(state.src.charCodeAt(pos))) pos++;
  if (pos === state.pos) return false;
  if (!silent) state.pending += state.src.slice(state.pos, pos);
  state.pos = pos;
  return true;
});

/** ||spoiler||: hidden until clicked; its content is markdown too. */
md.inline.ruler.before('emphasis', 'spoiler', (state: StateInline, silent: boolean) => {
  const start = state.pos;
  if (!state.src.startsWith('||', start)) return false;
  const end = state.src.indexOf('||', start + 2);
  if (end < 0 || end === start + 2 || end >= state.posMax) return false;
  if (silent) return true;
  const max = state.posMax;
  state.push('spoiler_open', 'span', 1).markup = '||';
  state.pos = start + 2;
  state.posMax = end;
  state.md.inline.tokenize(state);
  state.push('spoiler_close', 'span', -1).markup = '||';
  state.pos = end + 2;
  state.posMax = max;
  return true;
});

const MENTION = /^<(@!?|@&|#)(\d{1,20})>/;
const EVERYONE = /^@(everyone|here)\b/;

/** D62 mentions: <@id> (or the older <@!id>), <@&id> a role, <#id> a channel, @everyone, @here. */
md.inline.ruler.before('autolink', 'mention', (state: StateInline, silent: boolean) => {
  const rest = state.src.slice(state.pos, state.posMax);
  const m = MENTION.exec(rest);
  const e = m ? null : EVERYONE.exec(rest);
  if (!m && !e) return false;
  // "@here" inside a word (an address) is not a mention
  if (e && state.pos > 0 && /\w/.test(state.src.charAt(state.pos - 1))) return false;
  if (!silent) {
    const t = state.push('mention', '', 0);
    if (m) {
      t.meta = {
        kind: m[1] === '#' ? 'channel' : m[1] === '@&' ? 'role' : 'user',
        id: Number(m[2]),
      };
    } else {
      t.meta = { kind: e![1] };
    }
    t.content = (m ?? e)![0];
  }
  state.pos += (m ?? e)![0].length;
  return true;
});

export type MentionMeta =
  { kind: 'user' | 'role' | 'channel'; id: number } | { kind: 'everyone' | 'here' };

export type { Token };

/** The tokens of one message's content (block tokens; `inline` ones hold their children). */
export function parseMarkdown(src: string): Token[] {
  return md.parse(src, {});
}

/**
 * The words a reader sees, without the markup, on one line: the preview of a replied-to message
 * (`**today**` reads "today", a code block its code). Mentions stay as written (`<@id>`) for the
 * caller to name; a spoiler stays hidden.
 */
export function plainText(src: string): string {
  const out: string[] = [];
  let spoiler = 0;
  const inline = (children: Token[]) => {
    for (const t of children) {
      if (t.type === 'spoiler_open') {
        if (spoiler++ === 0) out.push('(spoiler)');
      } else if (t.type === 'spoiler_close') spoiler--;
      else if (spoiler > 0) continue;
      else if (t.type === 'text' || t.type === 'code_inline' || t.type === 'mention')
        out.push(t.content);
      else if (t.type === 'softbreak' || t.type === 'hardbreak') out.push(' ');
    }
  };
  for (const t of parseMarkdown(src)) {
    if (t.type === 'inline') inline(t.children ?? []);
    else if (t.type === 'fence') out.push(t.content);
    // a new block (paragraph, heading, list item, quote) is a new word
    if (t.nesting === -1 || t.type === 'fence') out.push(' ');
  }
  return out.join('').replace(/\s+/g, ' ').trim();
}
