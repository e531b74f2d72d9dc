import type {
  ActionRow,
  Button,
  Interaction,
  Message,
  ResponseMessage,
  Select,
} from '@parley/protocol';

/**
 * D64–D65 helpers for bots: component builders and an interaction's answers (reply, defer,
 * follow-up, edit of @original, update). The interaction's token authorizes every answer for 15
 * minutes — no Authorization header, so these calls use plain fetch against `{url}/api/v1`.
 */

/** A button (style 1 primary, 2 secondary, 3 success, 4 danger); `link` makes a style-5 one. */
export const button = (
  customId: string,
  label: string,
  o: { style?: 1 | 2 | 3 | 4; disabled?: boolean; emoji?: string } = {},
): Button => ({ type: 2, style: o.style ?? 1, label, customId, ...rest(o) });

export const linkButton = (url: string, label: string): Button => ({
  type: 2,
  style: 5,
  label,
  url,
});

export const select = (
  customId: string,
  options: Array<{ label: string; value: string; description?: string }>,
  o: { placeholder?: string; minValues?: number; maxValues?: number; disabled?: boolean } = {},
): Select => ({ type: 3, customId, options, ...o });

/** An action row: up to five buttons, or one select. */
export const row = (...components: Array<Button | Select>): ActionRow => ({ type: 1, components });

function rest(o: { disabled?: boolean; emoji?: string }): Partial<Button> {
  const out: Partial<Button> = {};
  if (o.disabled !== undefined) out.disabled = o.disabled;
  if (o.emoji !== undefined) out.emoji = o.emoji;
  return out;
}

export type ReplyInput = string | (ResponseMessage & { ephemeral?: boolean });

const message = (r: ReplyInput): ResponseMessage => {
  if (typeof r === 'string') return { content: r };
  const { ephemeral, ...m } = r;
  return ephemeral ? { ...m, flags: 1 } : m;
};

/**
 * One interaction as a handler sees it. `reply`, `defer`, `deferUpdate` and `update` are the one
 * callback (a second is refused by the server with 409); `followUp` and `editReply` come after.
 * A webhook bot's handler may `respond` instead: the answer then goes back in the webhook's
 * response body (bot.webhookHandler).
 */
export class InteractionContext {
  /** set when the answer is to travel in a webhook's response instead of a request */
  respond: ((body: { type: number; data?: unknown }) => void) | undefined;
  private answered = false;

  constructor(
    readonly interaction: Interaction,
    private readonly o: { url: string; botId: number; fetch?: typeof fetch },
  ) {}

  get user(): Interaction['user'] {
    return this.interaction.user;
  }

  /** a command's options by name (a sub-command's own, when there is one) */
  get options(): Record<string, string | number | boolean> {
    const d = this.interaction.data;
    if (!('options' in d)) return {};
    const out: Record<string, string | number | boolean> = {};
    let list: unknown[] = d.options;
    const first = list[0] as { options?: unknown[] } | undefined;
    if (first?.options) list = first.options;
    for (const x of list as Array<{ name: string; value?: string | number | boolean }>)
      if (x.value !== undefined) out[x.name] = x.value;
    return out;
  }

  reply(r: ReplyInput): Promise<void> {
    return this.callback(4, message(r));
  }
  defer(o: { ephemeral?: boolean } = {}): Promise<void> {
    return this.callback(5, o.ephemeral ? { flags: 1 } : undefined);
  }
  deferUpdate(): Promise<void> {
    return this.callback(6);
  }
  update(r: ReplyInput): Promise<void> {
    return this.callback(7, message(r));
  }
  autocomplete(choices: Array<{ name: string; value: string | number }>): Promise<void> {
    return this.callback(8, { choices });
  }

  followUp(r: ReplyInput): Promise<Message> {
    return this.call('POST', `/webhooks/${this.o.botId}/${this.interaction.token}`, message(r));
  }
  editReply(r: ReplyInput): Promise<Message> {
    const { flags: _f, ...m } = message(r);
    return this.call(
      'PATCH',
      `/webhooks/${this.o.botId}/${this.interaction.token}/messages/@original`,
      m,
    );
  }

  private async callback(type: number, data?: unknown): Promise<void> {
    if (this.answered) throw new Error('This interaction has already been answered');
    this.answered = true;
    const body = data === undefined ? { type } : { type, data };
    if (this.respond) {
      const send = this.respond;
      this.respond = undefined;
      send(body);
      return;
    }
    await this.call(
      'POST',
      `/interactions/${this.interaction.id}/${this.interaction.token}/callback`,
      body,
    );
  }

  private async call<T>(method: string, path: string, body: unknown): Promise<T> {
    const f = this.o.fetch ?? globalThis.fetch.bind(globalThis);
    const res = await f(`${this.o.url.replace(/\/+$/, '')}/api/v1${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }
}
