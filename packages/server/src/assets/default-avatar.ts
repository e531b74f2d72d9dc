import { crc32, deflateSync } from 'node:zlib';

/**
 * D20: the default avatar is a real PNG. Drawn once at start-up (a head-and-shoulders
 * silhouette) rather than shipped as a binary, so the repository holds no opaque blobs.
 */
const SIZE = 128;

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

export function renderDefaultAvatar(): Buffer {
  const bg = [88, 101, 242];
  const fg = [235, 238, 255];
  const raw = Buffer.alloc((SIZE * 3 + 1) * SIZE);
  for (let y = 0; y < SIZE; y++) {
    const row = y * (SIZE * 3 + 1);
    raw[row] = 0; // filter: none
    for (let x = 0; x < SIZE; x++) {
      const head = (x - 64) ** 2 + (y - 50) ** 2 < 22 ** 2;
      const shoulders = y > 82 && (x - 64) ** 2 / 40 ** 2 + (y - 118) ** 2 / 34 ** 2 < 1;
      const c = head || shoulders ? fg : bg;
      raw.set(c, row + 1 + x * 3);
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(SIZE, 0);
  ihdr.writeUInt32BE(SIZE, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
