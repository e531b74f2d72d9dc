import type { Attachment, Embed, EmbedInput } from '@parley/protocol';
import { RICH_LIMITS } from '@parley/protocol';
import { forbidden, invalid } from '../../errors/app-error.js';
import type { Domain } from '../context.js';
import { fileUrl, findFile, parseFileId, type StoredFile } from '../files/files.service.js';

/**
 * D15/D61: the file behind a URL, when it is exactly the URL an upload to this platform answered
 * (`{cdn_url}/files/<id>/<filename>`, compared whole: right id, right name, no encoding games).
 */
export async function uploadedFile(d: Domain, url: string): Promise<StoredFile | undefined> {
  const prefix = `${d.urls.cdn}/files/`;
  if (!url.startsWith(prefix)) return undefined;
  const m = /^([^/]+)\/[^/?#]+$/.exec(url.slice(prefix.length));
  const id = m?.[1] === undefined ? undefined : parseFileId(m[1]);
  if (id === undefined) return undefined;
  const file = await findFile(d, id);
  return file && fileUrl(d.urls, file.id, file.filename) === url ? file : undefined;
}

/**
 * D61: 1–10 uploads of this platform. Type, size and dimensions come from the stored file (read
 * from its bytes at upload), never from the client.
 */
export async function resolveAttachments(
  d: Domain,
  urls: readonly string[],
): Promise<Attachment[]> {
  if (new Set(urls).size !== urls.length) throw invalid('attachments', 'must not repeat a file');
  const out: Attachment[] = [];
  for (const [i, url] of urls.entries()) {
    const f = await uploadedFile(d, url);
    if (!f)
      throw invalid(`attachments/${i}`, 'must be the URL of a file uploaded to this platform');
    const a: Attachment = { url, filename: f.filename, size: Number(f.size), contentType: f.mime };
    if (f.width !== null && f.height !== null) {
      a.width = f.width;
      a.height = f.height;
    }
    out.push(a);
  }
  return out;
}

const textOf = (e: EmbedInput): number =>
  [
    e.title,
    e.description,
    e.author?.name,
    e.footer?.text,
    ...(e.fields ?? []).flatMap((f) => [f.name, f.value]),
  ].reduce((n, t) => n + (t === undefined ? 0 : [...t].length), 0);

/** An embed's link: an http(s) URL (a `javascript:` link never reaches a client). */
function checkLink(field: string, url: string | undefined): void {
  if (url === undefined) return;
  let ok = false;
  try {
    const u = new URL(url);
    ok = u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    ok = false;
  }
  if (!ok) throw invalid(field, 'must be an http(s) URL');
}

/**
 * D61: a bot's embeds (people → 403): ≤ 10, all their text together ≤ 6,000 characters; image,
 * thumbnail and icon URLs must be uploads of this platform (so a reader's browser never fetches
 * a third party's address), links http(s).
 */
export async function checkEmbeds(
  d: Domain,
  isBot: boolean,
  embeds: readonly EmbedInput[],
): Promise<Embed[]> {
  if (embeds.length === 0) return [];
  if (!isBot) throw forbidden('Only bots send embeds');
  const total = embeds.reduce((n, e) => n + textOf(e), 0);
  if (total > RICH_LIMITS.embedTotal)
    throw invalid(
      'embeds',
      `must hold at most ${RICH_LIMITS.embedTotal} characters of text together`,
    );
  const out: Embed[] = [];
  for (const [i, e] of embeds.entries()) {
    const at = `embeds/${i}`;
    checkLink(`${at}/url`, e.url);
    checkLink(`${at}/author/url`, e.author?.url);
    const media: Array<[string, string | undefined]> = [
      [`${at}/image/url`, e.image?.url],
      [`${at}/thumbnail/url`, e.thumbnail?.url],
      [`${at}/author/iconUrl`, e.author?.iconUrl],
      [`${at}/footer/iconUrl`, e.footer?.iconUrl],
    ];
    const dims = new Map<string, { width?: number; height?: number }>();
    for (const [field, url] of media) {
      if (url === undefined) continue;
      const f = await uploadedFile(d, url);
      if (!f || !f.mime.startsWith('image/'))
        throw invalid(field, 'must be the URL of an image uploaded to this platform');
      if (f.width !== null && f.height !== null)
        dims.set(field, { width: f.width, height: f.height });
    }
    const embed: Embed = { type: 'rich', ...e };
    if (e.image) embed.image = { url: e.image.url, ...dims.get(`${at}/image/url`) };
    if (e.thumbnail) embed.thumbnail = { url: e.thumbnail.url, ...dims.get(`${at}/thumbnail/url`) };
    out.push(embed);
  }
  return out;
}
