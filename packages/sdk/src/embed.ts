import type { EmbedInput } from '@parley/protocol';
import { RICH_LIMITS } from '@parley/protocol';

/**
 * D61: a bot's embed, built step by step and checked against the server's limits before it is
 * sent (a RangeError names the broken limit). Image and icon URLs must be uploads of this
 * platform (`rest.files.upload(...)` answers one).
 *
 * ```ts
 * new EmbedBuilder().setTitle('Build #42').setColor(0x2ecc71).addFields({ name: 'Time', value: '3 s' })
 * ```
 */
export class EmbedBuilder {
  private readonly data: EmbedInput;

  constructor(data: EmbedInput = {}) {
    this.data = structuredClone(data);
  }

  setTitle(title: string): this {
    this.data.title = limit('title', title, RICH_LIMITS.embedTitle);
    return this;
  }
  setDescription(description: string): this {
    this.data.description = limit('description', description, RICH_LIMITS.embedDescription);
    return this;
  }
  setURL(url: string): this {
    this.data.url = url;
    return this;
  }
  /** 0xRRGGBB */
  setColor(color: number): this {
    if (!Number.isInteger(color) || color < 0 || color > 0xffffff)
      throw new RangeError('embed color must be 0x000000–0xFFFFFF');
    this.data.color = color;
    return this;
  }
  setTimestamp(at: Date | number | string = new Date()): this {
    this.data.timestamp = new Date(at).toISOString();
    return this;
  }
  setAuthor(author: { name: string; url?: string; iconUrl?: string }): this {
    this.data.author = {
      ...author,
      name: limit('author.name', author.name, RICH_LIMITS.authorName),
    };
    return this;
  }
  addFields(...fields: Array<{ name: string; value: string; inline?: boolean }>): this {
    const all = [...(this.data.fields ?? []), ...fields];
    if (all.length > RICH_LIMITS.embedFields)
      throw new RangeError(`an embed holds at most ${RICH_LIMITS.embedFields} fields`);
    for (const f of fields) {
      limit('field.name', f.name, RICH_LIMITS.fieldName);
      limit('field.value', f.value, RICH_LIMITS.fieldValue);
    }
    this.data.fields = all;
    return this;
  }
  setImage(url: string): this {
    this.data.image = { url };
    return this;
  }
  setThumbnail(url: string): this {
    this.data.thumbnail = { url };
    return this;
  }
  setFooter(footer: { text: string; iconUrl?: string }): this {
    this.data.footer = {
      ...footer,
      text: limit('footer.text', footer.text, RICH_LIMITS.footerText),
    };
    return this;
  }

  /** The characters that count towards the 6,000 of a message's embeds together (D61). */
  get length(): number {
    const d = this.data;
    return [d.title, d.description, d.author?.name, d.footer?.text]
      .concat((d.fields ?? []).flatMap((f) => [f.name, f.value]))
      .reduce((n, t) => n + (t === undefined ? 0 : [...t].length), 0);
  }

  toJSON(): EmbedInput {
    if (Object.keys(this.data).length === 0) throw new RangeError('an embed must not be empty');
    return structuredClone(this.data);
  }
}

function limit(what: string, text: string, max: number): string {
  const n = [...text].length;
  if (n === 0 || n > max) throw new RangeError(`embed ${what} must be 1–${max} characters`);
  return text;
}

/** D61: the embeds of one message, checked together (≤ 10, ≤ 6,000 characters of text). */
export function embedsJSON(embeds: ReadonlyArray<EmbedBuilder | EmbedInput>): EmbedInput[] {
  if (embeds.length > RICH_LIMITS.embeds)
    throw new RangeError(`a message holds at most ${RICH_LIMITS.embeds} embeds`);
  const built = embeds.map((e) => (e instanceof EmbedBuilder ? e : new EmbedBuilder(e)));
  const total = built.reduce((n, e) => n + e.length, 0);
  if (total > RICH_LIMITS.embedTotal)
    throw new RangeError(`a message's embeds hold at most ${RICH_LIMITS.embedTotal} characters`);
  return built.map((e) => e.toJSON());
}
