import { h, type ComponentChildren } from 'preact';
import { parseMarkdown, safeUrl, type MentionMeta, type Token } from '../lib/markdown.js';

/**
 * D62: message content as Preact elements. Every element comes from the allow-list below, keyed
 * by token type (never the token's own tag name), text is always a text node, and a link's
 * address is checked again here (http and https only). No HTML string is ever made, so there
 * is nothing for innerHTML to run.
 */

/** How mentions read and whether one is the reader (highlighted). */
export interface MentionNames {
  user(id: number): string | undefined;
  role(id: number): { name: string; color: number | null } | undefined;
  channel(id: number): string | undefined;
  meId: number | undefined;
  myRoles: ReadonlySet<number>;
}

export const NO_NAMES: MentionNames = {
  user: () => undefined,
  role: () => undefined,
  channel: () => undefined,
  meId: undefined,
  myRoles: new Set(),
};

interface Frame {
  type: string;
  token: Token;
  children: ComponentChildren[];
}

const hex = (n: number): string => `#${n.toString(16).padStart(6, '0')}`;

function mention(t: Token, names: MentionNames): ComponentChildren {
  const m = t.meta as MentionMeta;
  switch (m.kind) {
    case 'user': {
      const name = names.user(m.id);
      return h(
        'span',
        { class: `mention${m.id === names.meId ? ' me' : ''}`, 'data-user': m.id },
        name === undefined ? '@unknown-user' : `@${name}`,
      );
    }
    case 'role': {
      const r = names.role(m.id);
      return h(
        'span',
        {
          class: `mention role${names.myRoles.has(m.id) ? ' me' : ''}`,
          style: r?.color ? { color: hex(r.color) } : undefined,
        },
        r === undefined ? '@deleted-role' : `@${r.name}`,
      );
    }
    case 'channel': {
      const c = names.channel(m.id);
      return h(
        'span',
        { class: 'mention channel', 'data-channel': m.id },
        c === undefined ? '#unknown' : `#${c}`,
      );
    }
    default:
      return h('span', { class: 'mention everyone' }, t.content);
  }
}

/** The element for an opening token's frame, once its children are known. */
function element(f: Frame): ComponentChildren {
  const t = f.token;
  const kids = f.children;
  switch (f.type) {
    case 'paragraph':
      // a tight list's items hold their text without a paragraph of their own
      return t.hidden ? kids : h('p', null, kids);
    case 'heading': {
      const level = Number(t.tag.slice(1));
      // D62 has three levels: "#### x" stays what was written
      if (level > 3) return h('p', null, [`${t.markup} `, ...kids]);
      return h(level === 1 ? 'h3' : level === 2 ? 'h4' : 'h5', { class: 'md-h' }, kids);
    }
    case 'blockquote':
      return h('blockquote', null, kids);
    case 'bullet_list':
      return h('ul', null, kids);
    case 'ordered_list': {
      const start = Number(t.attrGet('start') ?? 1);
      return h('ol', Number.isSafeInteger(start) && start !== 1 ? { start } : null, kids);
    }
    case 'list_item':
      return h('li', null, kids);
    case 'strong':
      // Discord's dialect: __x__ underlines, **x** is bold
      return h(t.markup === '__' ? 'u' : 'strong', null, kids);
    case 'em':
      return h('em', null, kids);
    case 's':
      return h('s', null, kids);
    case 'spoiler':
      return h(
        'span',
        { class: 'spoiler', role: 'button', tabIndex: 0, 'aria-label': 'Spoiler (show)' },
        kids,
      );
    case 'link': {
      const href = String(t.attrGet('href') ?? '');
      if (!safeUrl(href)) return kids;
      // A masked link ([text](url)) says where it goes: the title shows the address, and the
      // app asks before leaving (data-masked). Autolinks show their address as their text.
      const masked = t.markup !== 'linkify' && t.info !== 'auto';
      return h(
        'a',
        {
          href,
          target: '_blank',
          rel: 'noopener noreferrer nofollow ugc',
          title: masked ? href : undefined,
          'data-masked': masked ? '' : undefined,
        },
        kids,
      );
    }
    default:
      return kids; // nothing outside the list gets an element of its own
  }
}

function inline(tokens: readonly Token[], names: MentionNames): ComponentChildren[] {
  return walk(tokens, names);
}

function walk(tokens: readonly Token[], names: MentionNames): ComponentChildren[] {
  const root: Frame = { type: 'root', token: tokens[0]!, children: [] };
  const stack: Frame[] = [root];
  const top = () => stack[stack.length - 1]!;
  for (const t of tokens) {
    if (t.nesting === 1) {
      stack.push({ type: t.type.replace(/_open$/, ''), token: t, children: [] });
      continue;
    }
    if (t.nesting === -1) {
      const f = stack.length > 1 ? stack.pop()! : root;
      top().children.push(element(f));
      continue;
    }
    const out = top().children;
    switch (t.type) {
      case 'inline':
        out.push(...inline(t.children ?? [], names));
        break;
      case 'text':
        out.push(t.content);
        break;
      case 'softbreak':
      case 'hardbreak':
        out.push('\n'); // shown as a line break (white-space: pre-wrap)
        break;
      case 'code_inline':
        out.push(h('code', null, t.content));
        break;
      case 'fence':
      case 'code_block': {
        const lang = t.info.trim().split(/\s+/)[0] ?? '';
        out.push(
          h(
            'pre',
            { class: 'md-code', 'data-lang': /^[\w+#.-]{1,32}$/.test(lang) ? lang : undefined },
            h('code', null, t.content.replace(/\n$/, '')),
          ),
        );
        break;
      }
      case 'mention':
        out.push(mention(t, names));
        break;
      default:
        // any other leaf (none is expected) shows as the text it came from
        if (t.content) out.push(t.content);
    }
  }
  // unbalanced tokens (none are expected): close what is open
  while (stack.length > 1) {
    const f = stack.pop()!;
    top().children.push(element(f));
  }
  return root.children;
}

/** The content of a message as elements (D62). */
export function renderMarkdown(src: string, names: MentionNames = NO_NAMES): ComponentChildren[] {
  return walk(parseMarkdown(src), names);
}
