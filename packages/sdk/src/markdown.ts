/**
 * D62: the content syntax (Discord's dialect) as a bot writes it: mention builders and an escape
 * that makes any text show as written. The server resolves mentions (D62); these only build the
 * text.
 */

/** `<@userId>`: notifies the member (unless allowedMentions says otherwise, D61). */
export const userMention = (userId: number): string => `<@${userId}>`;
/** `<@&roleId>` */
export const roleMention = (roleId: number): string => `<@&${roleId}>`;
/** `<#channelId>` */
export const channelMention = (channelId: number): string => `<#${channelId}>`;
/** `@everyone` (notifies only with MENTION_EVERYONE, D57) */
export const everyoneMention = '@everyone';
/** `@here` */
export const hereMention = '@here';

/** Every character D62's grammar gives a meaning to, escaped with `\`. */
const SPECIAL = /[\\*_~`|>#\-[\]()<@]/g;

/**
 * Text that renders exactly as written: markdown markers, quotes, headings, lists, links and
 * mentions are escaped (`\*`, `\<@1>`…), so user input can be echoed safely. `@everyone` is
 * broken too (an escaped `@` is not a mention, D62).
 */
export function escapeMarkdown(text: string): string {
  // `1. ` starts an ordered list only at a line's start
  return text.replace(SPECIAL, (c) => `\\${c}`).replace(/^(\s*\d+)\./gm, '$1\\.');
}

/** Small builders for the D62 markers (the text is escaped unless `raw`). */
export const md = {
  bold: (t: string): string => `**${t}**`,
  italic: (t: string): string => `*${t}*`,
  underline: (t: string): string => `__${t}__`,
  strike: (t: string): string => `~~${t}~~`,
  spoiler: (t: string): string => `||${t}||`,
  /** inline code: backticks inside are impossible to escape, so a double fence is used then */
  code: (t: string): string => (t.includes('`') ? `\`\` ${t} \`\`` : `\`${t}\``),
  /** a fenced block with an optional language */
  codeBlock: (t: string, language = ''): string =>
    `\`\`\`${language}\n${t.replace(/```/g, '`\u200b``')}\n\`\`\``,
  quote: (t: string): string =>
    t
      .split('\n')
      .map((l) => `> ${l}`)
      .join('\n'),
  /** `[text](url)`: shown with its target by clients (D62) */
  link: (text: string, url: string): string => `[${escapeMarkdown(text)}](${url})`,
  /** `<url>`: a link without a preview (D71) */
  noPreview: (url: string): string => `<${url}>`,
};
