import { isValidElement, type ComponentChildren, type VNode } from 'preact';
import { describe, expect, it } from 'vitest';
import { renderMarkdown, type MentionNames } from '../../src/ui/markdown.js';

// D62 in the web app: markdown-it configured for Discord's dialect, rendered to Preact elements
// from an allow-list (never an HTML string). These tests walk the elements without a browser.

const TAGS = new Set([
  'p',
  'h3',
  'h4',
  'h5',
  'blockquote',
  'ul',
  'ol',
  'li',
  'strong',
  'u',
  'em',
  's',
  'span',
  'a',
  'code',
  'pre',
]);
const ATTRS = new Set([
  'class',
  'href',
  'target',
  'rel',
  'title',
  'data-masked',
  'role',
  'tabIndex',
  'aria-label',
  'data-user',
  'data-channel',
  'data-lang',
  'style',
  'start',
  'children',
]);

/** A small HTML form of the elements (text escaped), for readable assertions. */
function html(c: ComponentChildren): string {
  if (c === null || c === undefined || typeof c === 'boolean') return '';
  if (Array.isArray(c)) return c.map(html).join('');
  if (typeof c === 'string' || typeof c === 'number')
    return String(c)
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;');
  if (!isValidElement(c)) throw new Error('not an element');
  const v = c as VNode<Record<string, unknown>>;
  const tag = v.type as string;
  const attrs = Object.entries(v.props)
    .filter(([k, val]) => k !== 'children' && val !== undefined)
    .map(([k, val]) => ` ${k}="${JSON.stringify(val).replace(/^"|"$/g, '')}"`)
    .join('');
  return `<${tag}${attrs}>${html(v.props['children'])}</${tag}>`;
}

/** Every element and attribute from the allow-lists, every link http(s). */
function assertSafe(c: ComponentChildren): void {
  if (c === null || c === undefined || typeof c !== 'object') return;
  if (Array.isArray(c)) return c.forEach(assertSafe);
  const v = c as VNode<Record<string, unknown>>;
  expect(typeof v.type, 'only DOM elements, no components').toBe('string');
  expect(TAGS, `tag ${String(v.type)}`).toContain(v.type);
  for (const [k, val] of Object.entries(v.props)) {
    expect(ATTRS, `attribute ${k}`).toContain(k);
    if (k === 'href') expect(String(val)).toMatch(/^https?:\/\//);
    if (typeof val === 'string') expect(val).not.toMatch(/^\s*(javascript|data|vbscript):/i);
  }
  expect(v.props['dangerouslySetInnerHTML']).toBeUndefined();
  assertSafe(v.props['children']);
}

const names: MentionNames = {
  user: (id) => ({ 1: 'alice', 2: 'bob' })[id],
  role: (id) => (id === 7 ? { name: 'mods', color: 0x3366ff } : undefined),
  channel: (id) => (id === 9 ? 'general' : undefined),
  meId: 2,
  myRoles: new Set([7]),
};
const md = (s: string) => html(renderMarkdown(s, names));

describe('markdown (D62)', () => {
  it('the inline syntax of the dialect', () => {
    expect(md('**bold** *it* _it_ __under__ ~~gone~~ `co*de*`')).toBe(
      '<p><strong>bold</strong> <em>it</em> <em>it</em> <u>under</u> <s>gone</s> <code>co*de*</code></p>',
    );
    expect(md('***both*** and __*mixed*__')).toBe(
      '<p><em><strong>both</strong></em> and <u><em>mixed</em></u></p>',
    );
    expect(md('a ||secret **bold**|| b')).toBe(
      '<p>a <span class="spoiler" role="button" tabIndex="0" aria-label="Spoiler (show)">secret <strong>bold</strong></span> b</p>',
    );
    expect(md('\\*not italic\\* and \\|\\|not hidden\\|\\|')).toBe(
      '<p>*not italic* and ||not hidden||</p>',
    );
    // a single newline is a line break (kept as a newline, shown by white-space: pre-wrap)
    expect(md('line one\nline two')).toBe('<p>line one\nline two</p>');
  });

  it('blocks: fenced code with a language, quotes, three heading levels, lists', () => {
    expect(md('```ts\nconst a = 1 < 2;\n```')).toBe(
      '<pre class="md-code" data-lang="ts"><code>const a = 1 &lt; 2;</code></pre>',
    );
    expect(md('> quoted **text**')).toBe(
      '<blockquote><p>quoted <strong>text</strong></p></blockquote>',
    );
    expect(md('# One\n## Two\n### Three\n#### Four')).toBe(
      '<h3 class="md-h">One</h3><h4 class="md-h">Two</h4><h5 class="md-h">Three</h5><p>#### Four</p>',
    );
    expect(md('- a\n- b')).toBe('<ul><li>a</li><li>b</li></ul>');
    expect(md('3. c\n4. d')).toBe('<ol start="3"><li>c</li><li>d</li></ol>');
    // not in the dialect: they stay the text that was written
    expect(md('    indented')).toBe('<p>indented</p>');
    expect(md('| a | b |\n|---|---|\n| 1 | 2 |')).toContain('| a | b |');
    expect(md('---')).toBe('<p>---</p>');
    expect(md('![alt](https://example.com/a.png)')).toBe(
      '<p>!<a href="https://example.com/a.png" target="_blank" rel="noopener noreferrer nofollow ugc" title="https://example.com/a.png" data-masked="">alt</a></p>',
    );
    expect(md('&amp; &lt;b&gt;')).toBe('<p>&amp;amp; &amp;lt;b&amp;gt;</p>');
  });

  it('links: http(s) URLs autolinked, masked links carry their target', () => {
    expect(md('see https://example.com/a_b_c?x=1 now')).toBe(
      '<p>see <a href="https://example.com/a_b_c?x=1" target="_blank" rel="noopener noreferrer nofollow ugc">https://example.com/a_b_c?x=1</a> now</p>',
    );
    expect(md('<https://example.com>')).toBe(
      '<p><a href="https://example.com" target="_blank" rel="noopener noreferrer nofollow ugc">https://example.com</a></p>',
    );
    expect(md('[docs](https://example.com/docs)')).toBe(
      '<p><a href="https://example.com/docs" target="_blank" rel="noopener noreferrer nofollow ugc" title="https://example.com/docs" data-masked="">docs</a></p>',
    );
    // no guessing: bare names, mail and other schemes stay text
    expect(md('example.com me@example.com ftp://example.com')).toBe(
      '<p>example.com me@example.com ftp://example.com</p>',
    );
  });

  it('mentions: people, roles, channels, everyone; mine marked', () => {
    expect(md('hi <@1> and <@!2>, <@&7> <#9> <@99> @everyone @here mail@here.com')).toBe(
      '<p>hi <span class="mention" data-user="1">@alice</span> and ' +
        '<span class="mention me" data-user="2">@bob</span>, ' +
        '<span class="mention role me" style="{"color":"#3366ff"}">@mods</span> ' +
        '<span class="mention channel" data-channel="9">#general</span> ' +
        '<span class="mention" data-user="99">@unknown-user</span> ' +
        '<span class="mention everyone">@everyone</span> <span class="mention everyone">@here</span> mail@here.com</p>',
    );
    expect(md('`<@1>`')).toBe('<p><code>&lt;@1&gt;</code></p>'); // code stays code
  });

  // The usual XSS payloads (OWASP's filter evasion list, the security review's attempts on the
  // people's side): each must come out as text or as a safe element with a safe address.
  const PAYLOADS = [
    '<script>alert(1)</script>',
    '<img src=x onerror=alert(1)>',
    '<svg/onload=alert(1)>',
    '<iframe src="javascript:alert(1)"></iframe>',
    '<a href="javascript:alert(1)">x</a>',
    '[x](javascript:alert(1))',
    '[x](JaVaScRiPt:alert(1))',
    '[x](  javascript:alert(1)  )',
    '[x](java\tscript:alert(1))',
    '[x](javascript&#58;alert(1))',
    '[x](&#106;avascript:alert(1))',
    '[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
    '[x](vbscript:msgbox(1))',
    '[x](file:///etc/passwd)',
    '![x](javascript:alert(1))',
    '<javascript:alert(1)>',
    '[a](https://example.com" onmouseover="alert(1))',
    '<https://example.com/"onmouseover="alert(1)>',
    'https://example.com/"><script>alert(1)</script>',
    '[<img src=x onerror=alert(1)>](https://example.com)',
    '||<img src=x onerror=alert(1)>||',
    '```"><img src=x onerror=alert(1)>\ncode\n```',
    '<@1 onmouseover=alert(1)>',
    '<style>*{display:none}</style><form action=https://evil.example><input></form>',
    '"><script>alert(document.cookie)</script>',
    '&lt;script&gt;alert(1)&lt;/script&gt;',
    '[x](\\javascript:alert(1))',
    '[x](<javascript:alert(1)>)',
    '<a href=https://example.com>x</a>',
    '> <script>alert(1)</script>\n- <img src=x onerror=alert(1)>',
  ];
  it.each(PAYLOADS)('an XSS payload stays harmless: %s', (payload) => {
    const out = renderMarkdown(payload, names);
    assertSafe(out);
    const text = html(out);
    expect(text).not.toMatch(/<(script|img|svg|iframe|style|form|input)\b/i);
    expect(text).not.toMatch(/\son\w+="/i);
  });
});
