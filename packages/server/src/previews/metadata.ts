import { loadHtmlParser } from '../lazy-modules.js';

/** D71: what a page says of itself, from OpenGraph, Twitter-card and plain HTML metadata. */
export interface PageMeta {
  title?: string;
  description?: string;
  siteName?: string;
  image?: string;
  url?: string;
}

const LIMITS = { title: 256, description: 350, siteName: 256 } as const;

const clip = (s: string | undefined, n: number): string | undefined => {
  const t = s?.replace(/\s+/g, ' ').trim();
  if (!t) return undefined;
  const cps = [...t];
  return cps.length <= n ? t : `${cps.slice(0, n - 1).join('')}…`;
};

/**
 * Reads `<meta property|name content>` and `<title>` with a real HTML parser (htmlparser2:
 * entities decoded, malformed markup tolerated), stopping at `</head>`. Nothing of the page is
 * ever rendered: only these strings leave, as plain text.
 */
export async function readMeta(html: string): Promise<PageMeta> {
  const { Parser } = await loadHtmlParser();
  const meta = new Map<string, string>();
  let title = '';
  let inTitle = false;
  let done = false;
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (done) return;
        if (name === 'title') inTitle = true;
        if (name === 'meta') {
          const key = (attrs['property'] ?? attrs['name'] ?? '').toLowerCase();
          const content = attrs['content'];
          if (key && content !== undefined && !meta.has(key)) meta.set(key, content);
        }
        if (name === 'body') done = true;
      },
      ontext(text) {
        if (inTitle && !done) title += text;
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
        if (name === 'head') done = true;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  const pick = (...keys: string[]) => keys.map((k) => meta.get(k)).find((v) => v && v.trim());
  const out: PageMeta = {};
  const t = clip(pick('og:title', 'twitter:title') ?? title, LIMITS.title);
  if (t) out.title = t;
  const d = clip(pick('og:description', 'twitter:description', 'description'), LIMITS.description);
  if (d) out.description = d;
  const s = clip(pick('og:site_name'), LIMITS.siteName);
  if (s) out.siteName = s;
  const i = pick('og:image', 'og:image:url', 'og:image:secure_url', 'twitter:image');
  if (i) out.image = i.trim();
  const u = pick('og:url');
  if (u) out.url = u.trim();
  return out;
}

/**
 * D71/D62: the links of a message that get previews — autolinked http(s) URLs and masked links'
 * targets, outside code, never one written `<https://…>`; at most `max`, first come first.
 */
export function linksOf(content: string, max: number): string[] {
  const text = content.replace(/```[\s\S]*?```|`[^`\n]+`/g, ' ');
  const out: string[] = [];
  const re = /(<)?(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"\]])(>)?/gi;
  for (const m of text.matchAll(re)) {
    if (m[1] === '<' && m[3] === '>') continue; // suppressed
    const url = m[2] ?? '';
    try {
      const u = new URL(url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') continue;
    } catch {
      continue;
    }
    if (!out.includes(url)) out.push(url);
    if (out.length >= max) break;
  }
  return out;
}
