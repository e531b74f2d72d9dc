import { imageSize } from 'image-size';

/**
 * D61: an image's width and height, read from its own bytes (image-size parses the headers of
 * PNG, GIF and JPEG — a JPEG's frame header may follow its metadata, so the caller passes every
 * byte it has). Undefined when they cannot be read: the attachment then goes without them.
 */
export function imageDimensions(bytes: Uint8Array): { width: number; height: number } | undefined {
  try {
    const { width, height } = imageSize(bytes);
    if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1)
      return undefined;
    return { width, height };
  } catch {
    return undefined;
  }
}
