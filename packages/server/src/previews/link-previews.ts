import type { Embed } from '@parley/protocol';
import { RICH_LIMITS } from '@parley/protocol';
import type { Config } from '../config/config.js';
import type { Domain } from '../domain/context.js';
import type { RecordedEvent } from '../domain/events/recorder.js';
import { imageDimensions } from '../domain/files/dimensions.js';
import { FileKind, sniffFormat } from '../domain/files/formats.js';
import { readExtra, storeExtra } from '../domain/messages/extra.js';
import type { PreviewScheduler } from '../domain/messages/previews.js';
import { selectMessages } from '../domain/messages/read.js';
import { messageView, type MessageRow } from '../domain/views.js';
import type { BlobStore } from '../files/blob-store.js';
import { GuardedFetcher } from './fetch-page.js';
import { linksOf, readMeta } from './metadata.js';

const DAY_MS = 24 * 3_600_000;
const MAX_HTML = 1024 * 1024;
const MAX_IMAGE = 5 * 1024 * 1024;
/** previews fetched at once by this node; the rest wait their turn */
const CONCURRENCY = 2;
const MAX_QUEUE = 1_000;

type Job = MessageRow & { scope: RecordedEvent['scope'] };

/**
 * D71: link previews. After a person's message is stored, its http(s) links (up to 5) are
 * fetched by the server behind D37's guard, each URL at most once a day (link_previews), and the
 * message gains `embeds` of `type: "link"`. People are told by MESSAGE_UPDATE (DM_MESSAGE_UPDATE
 * in a DM) without `editedTimestamp` — it is not an edit (revises D35 for this case); bots only
 * by subscribing to MESSAGE_EMBEDS_UPDATE. Preview images are fetched once and served from
 * `{cdn_url}/proxy/<id>`, so a reader's browser never contacts the linked site.
 */
export class LinkPreviews implements PreviewScheduler {
  private readonly fetcher: GuardedFetcher;
  private readonly queue: Job[] = [];
  private running = 0;
  private readonly idleWaiters: Array<() => void> = [];
  private closed = false;

  constructor(
    private readonly domain: () => Domain,
    private readonly blobs: BlobStore,
    private readonly c: Config,
    private readonly log: (err: unknown) => void = () => {},
  ) {
    // one switch for every outbound request to an address a user supplied (D71, D37)
    this.fetcher = new GuardedFetcher({ allowInsecure: true, allowPrivate: c.webhookAllowPrivate });
  }

  schedule(m: Job): void {
    if (this.closed || !this.c.linkPreviews) return;
    if (linksOf(m.content, 1).length === 0) return;
    if (this.queue.length >= MAX_QUEUE) return; // overloaded: previews are a nicety
    this.queue.push(m);
    this.pump();
  }

  /** Resolves when nothing is queued or running (tests, shutdown). */
  idle(): Promise<void> {
    if (this.running === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.queue.length = 0;
    await this.idle();
    await this.fetcher.close();
  }

  private pump(): void {
    while (this.running < CONCURRENCY && this.queue.length > 0) {
      const job = this.queue.shift() as Job;
      this.running++;
      this.run(job)
        .catch((err: unknown) => this.log(err))
        .finally(() => {
          this.running--;
          this.pump();
          if (this.running === 0 && this.queue.length === 0)
            for (const w of this.idleWaiters.splice(0)) w();
        });
    }
  }

  private async run(job: Job): Promise<void> {
    const embeds: Embed[] = [];
    for (const url of linksOf(job.content, RICH_LIMITS.linkPreviews)) {
      if (this.closed) return;
      const e = await this.preview(url);
      if (e) embeds.push(e);
    }
    if (embeds.length === 0 || this.closed) return;
    const d = this.domain();
    await d.db.transaction().execute(async (trx) => {
      const row = await selectMessages(trx).where('m.id', '=', job.id).executeTakeFirst();
      if (!row || row.content !== job.content) return; // deleted or edited meanwhile
      const extra = readExtra(row.extra);
      extra.embeds = [...(extra.embeds ?? []).filter((e) => e.type !== 'link'), ...embeds];
      const text = storeExtra(extra);
      await trx.updateTable('messages').set({ extra: text }).where('id', '=', job.id).execute();
      const { editedTimestamp: _notAnEdit, ...message } = messageView({ ...row, extra: text });
      const guild = row.guild_id;
      if (job.scope.kind === 'channel')
        d.people.people(trx, {
          type: 'MESSAGE_UPDATE',
          data: message,
          audience: { kind: 'channel', guildId: job.scope.guildId, channelId: job.scope.channelId },
        });
      else if (job.scope.kind === 'dm')
        d.people.people(trx, {
          type: 'DM_MESSAGE_UPDATE',
          data: message,
          audience: { kind: 'users', userIds: [...job.scope.userIds] },
        });
      await d.events.record(trx, {
        envelope: {
          type: 'MESSAGE_EMBEDS_UPDATE',
          data: {
            id: row.id,
            channelId: row.channel_id,
            ...(guild === null ? {} : { guildId: guild }),
            embeds: extra.embeds,
          },
        },
        scope: job.scope,
        people: false,
      });
    });
  }

  /** One URL's link embed: from the day's cache, or fetched now (and cached, even when empty). */
  async preview(url: string): Promise<Embed | undefined> {
    const d = this.domain();
    const now = d.clock.now();
    const cached = await d.db
      .selectFrom('link_previews')
      .select(['embed', 'fetched_at'])
      .where('url', '=', url)
      .executeTakeFirst();
    if (cached && Number(cached.fetched_at) > now - DAY_MS)
      return cached.embed === null ? undefined : (JSON.parse(cached.embed) as Embed);
    let embed: Embed | undefined;
    try {
      embed = await this.fetchEmbed(url);
    } catch {
      embed = undefined; // refused by the guard, unreachable, too slow: no preview
    }
    const text = embed === undefined ? null : JSON.stringify(embed);
    await d.db
      .insertInto('link_previews')
      .values({ url, embed: text, fetched_at: now })
      .onConflict((oc) => oc.column('url').doUpdateSet({ embed: text, fetched_at: now }))
      .execute();
    return embed;
  }

  private async fetchEmbed(url: string): Promise<Embed | undefined> {
    const page = await this.fetcher.get(url, MAX_HTML, 'text/html,application/xhtml+xml');
    if (!page || !/^\s*(text\/html|application\/xhtml\+xml)/i.test(page.contentType))
      return undefined;
    const meta = await readMeta(page.body.toString('utf8'));
    if (meta.title === undefined && meta.description === undefined) return undefined;
    const embed: Embed = { type: 'link', url };
    if (meta.title !== undefined) embed.title = meta.title;
    if (meta.description !== undefined) embed.description = meta.description;
    if (meta.siteName !== undefined) embed.siteName = meta.siteName;
    if (meta.image !== undefined) {
      let imageUrl: string | undefined;
      try {
        imageUrl = new URL(meta.image, page.url).toString();
      } catch {
        imageUrl = undefined;
      }
      const image = imageUrl === undefined ? undefined : await this.proxied(imageUrl);
      if (image) embed.image = image;
    }
    return embed;
  }

  /**
   * D71: a preview image, fetched once, size-capped and type-sniffed as D23's uploads (only the
   * image formats uploads accept), kept in the blob store and served at `{cdn_url}/proxy/<id>`.
   */
  private async proxied(
    url: string,
  ): Promise<{ url: string; width?: number; height?: number } | undefined> {
    const d = this.domain();
    const known = await d.db
      .selectFrom('proxied_images')
      .select(['id', 'width', 'height'])
      .where('url', '=', url)
      .executeTakeFirst();
    if (known) return imageView(d, known);
    let got;
    try {
      got = await this.fetcher.get(url, MAX_IMAGE + 1, 'image/*');
    } catch {
      return undefined;
    }
    if (!got || got.truncated) return undefined;
    const format = await sniffFormat(got.body.subarray(0, 64 * 1024));
    if (!format || format.kind !== FileKind.IMAGE) return undefined;
    const dims = imageDimensions(got.body);
    const blob = await this.blobs.create();
    try {
      await blob.write(got.body);
      await blob.commit();
      const id = d.ids.next();
      await d.db
        .insertInto('proxied_images')
        .values({
          id,
          url,
          storage_key: blob.key,
          mime: format.mime,
          size: got.body.length,
          width: dims?.width ?? null,
          height: dims?.height ?? null,
          created_at: d.clock.now(),
        })
        .onConflict((oc) => oc.column('url').doNothing())
        .execute();
      const row = await d.db
        .selectFrom('proxied_images')
        .select(['id', 'width', 'height', 'storage_key'])
        .where('url', '=', url)
        .executeTakeFirst();
      // another node stored it first: ours is not needed
      if (!row || row.storage_key !== blob.key) await blob.abort();
      return row ? imageView(d, row) : undefined;
    } catch (err) {
      await blob.abort();
      throw err;
    }
  }
}

const imageView = (
  d: Domain,
  r: { id: number; width: number | null; height: number | null },
): { url: string; width?: number; height?: number } => ({
  url: `${d.urls.cdn}/proxy/${r.id}`,
  ...(r.width !== null && r.height !== null ? { width: r.width, height: r.height } : {}),
});
