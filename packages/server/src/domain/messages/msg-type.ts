import { invalid } from '../../errors/app-error.js';
import type { Domain } from '../context.js';
import { FileKind } from '../files/formats.js';
import { uploadedFile } from './uploads.js';

const KIND_NAME: Record<number, string> = {
  [FileKind.IMAGE]: 'an image (jpg, png, gif)',
  [FileKind.AUDIO]: 'audio (mp3, wav)',
  [FileKind.VIDEO]: 'a video (mp4)',
};

/**
 * D15: msgType 0 is text. 1 image, 2 audio, 3 video require `content` to be the URL of a file
 * uploaded to this platform, of that kind — exactly the URL the upload answered
 * (`{cdn_url}/files/<id>/<filename>`). Any other value → 400.
 */
export async function checkMsgType(d: Domain, msgType: number, content: string): Promise<void> {
  if (msgType === 0) return;
  const wanted = KIND_NAME[msgType];
  if (wanted === undefined)
    throw invalid('msgType', 'must be 0 (text), 1 (image), 2 (audio) or 3 (video)');
  const refuse = () =>
    invalid(
      'content',
      `must be the URL of ${wanted} file uploaded to this platform (msgType ${msgType})`,
    );
  const file = await uploadedFile(d, content);
  if (!file || file.kind !== msgType) throw refuse();
}
