// D66: the installable app's PNG icons (manifest.webmanifest), drawn from favicon.svg's shapes —
// a rounded square in the accent colour and a white speech bubble — with node:zlib only.
// Run once after changing the design: node packages/web/scripts/icons.mjs (writes public/*.png).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';
import { Buffer } from 'node:buffer';
import process from 'node:process';

// at the root of the build: the server serves root files by name (D55), not sub-folders
const out = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'public');
const ACCENT = [0x4f, 0x46, 0xe5];

/** Inside a rounded rectangle (favicon units: 0..32). */
const inRound = (x, y, x0, y0, x1, y1, r) => {
  if (x < x0 || x > x1 || y < y0 || y > y1) return false;
  const cx = Math.min(Math.max(x, x0 + r), x1 - r);
  const cy = Math.min(Math.max(y, y0 + r), y1 - r);
  return (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
};
/** The bubble of favicon.svg: a 16×11 rounded body and its tail. */
const inBubble = (x, y) =>
  inRound(x, y, 7, 10, 25, 21, 2) ||
  (x >= 11 && x <= 16 && y >= 21 && y <= 25 && y - 21 <= ((16 - x) * 4) / 5);

/** RGBA of one pixel, supersampled 4×4; `maskable`: full-bleed square, bubble in the safe zone. */
function pixel(px, py, size, maskable) {
  let bg = 0;
  let fg = 0;
  for (let i = 0; i < 4; i++)
    for (let j = 0; j < 4; j++) {
      const u = ((px + (i + 0.5) / 4) / size) * 32;
      const v = ((py + (j + 0.5) / 4) / size) * 32;
      const inBg = maskable || inRound(u, v, 0, 0, 32, 32, 8);
      // maskable: the bubble scaled to 62 % about the centre (inside the 80 % safe circle)
      const k = maskable ? 0.62 : 1;
      const bu = 16 + (u - 16) / k;
      const bv = 17.5 + (v - 16) / k;
      if (inBg) bg++;
      if (inBg && inBubble(bu, bv)) fg++;
    }
  const a = bg / 16;
  const w = bg === 0 ? 0 : fg / bg;
  const c = ACCENT.map((x) => Math.round(x + (255 - x) * w));
  return [...c, Math.round(a * 255)];
}

function crc32(buf) {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}
function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}
function png(size, maskable) {
  const raw = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) {
    raw[y * (size * 4 + 1)] = 0;
    for (let x = 0; x < size; x++) {
      const p = pixel(x, y, size, maskable);
      raw.set(p, y * (size * 4 + 1) + 1 + x * 4);
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

mkdirSync(out, { recursive: true });
for (const size of [192, 512]) {
  writeFileSync(path.join(out, `icon-${size}.png`), png(size, false));
  writeFileSync(path.join(out, `maskable-${size}.png`), png(size, true));
}
writeFileSync(path.join(out, 'apple-touch-icon.png'), png(180, true));
process.stdout.write(`icons written to ${out}\n`);
