import { crc32, deflateSync } from 'node:zlib';
import type { Rgb } from './avatars.ts';

/**
 * The generated avatar: the initials in white on a coloured square, as a PNG. PNG (not SVG) so the
 * image is as inert as a Gravatar photo when opened from the bucket, and shares its usual type.
 * Glyphs come from a 5 × 7 pixel font scaled up by whole pixels; no font files, no native code.
 */
const glyphs: Record<string, readonly string[]> = {
  A: ['01110', '10001', '10001', '11111', '10001', '10001', '10001'],
  B: ['11110', '10001', '10001', '11110', '10001', '10001', '11110'],
  C: ['01110', '10001', '10000', '10000', '10000', '10001', '01110'],
  D: ['11110', '10001', '10001', '10001', '10001', '10001', '11110'],
  E: ['11111', '10000', '10000', '11110', '10000', '10000', '11111'],
  F: ['11111', '10000', '10000', '11110', '10000', '10000', '10000'],
  G: ['01110', '10001', '10000', '10111', '10001', '10001', '01111'],
  H: ['10001', '10001', '10001', '11111', '10001', '10001', '10001'],
  I: ['01110', '00100', '00100', '00100', '00100', '00100', '01110'],
  J: ['00111', '00010', '00010', '00010', '00010', '10010', '01100'],
  K: ['10001', '10010', '10100', '11000', '10100', '10010', '10001'],
  L: ['10000', '10000', '10000', '10000', '10000', '10000', '11111'],
  M: ['10001', '11011', '10101', '10101', '10001', '10001', '10001'],
  N: ['10001', '10001', '11001', '10101', '10011', '10001', '10001'],
  O: ['01110', '10001', '10001', '10001', '10001', '10001', '01110'],
  P: ['11110', '10001', '10001', '11110', '10000', '10000', '10000'],
  Q: ['01110', '10001', '10001', '10001', '10101', '10010', '01101'],
  R: ['11110', '10001', '10001', '11110', '10100', '10010', '10001'],
  S: ['01111', '10000', '10000', '01110', '00001', '00001', '11110'],
  T: ['11111', '00100', '00100', '00100', '00100', '00100', '00100'],
  U: ['10001', '10001', '10001', '10001', '10001', '10001', '01110'],
  V: ['10001', '10001', '10001', '10001', '10001', '01010', '00100'],
  W: ['10001', '10001', '10001', '10101', '10101', '10101', '01010'],
  X: ['10001', '10001', '01010', '00100', '01010', '10001', '10001'],
  Y: ['10001', '10001', '01010', '00100', '00100', '00100', '00100'],
  Z: ['11111', '00001', '00010', '00100', '01000', '10000', '11111'],
  '0': ['01110', '10001', '10011', '10101', '11001', '10001', '01110'],
  '1': ['00100', '01100', '00100', '00100', '00100', '00100', '01110'],
  '2': ['01110', '10001', '00001', '00010', '00100', '01000', '11111'],
  '3': ['11111', '00010', '00100', '00010', '00001', '10001', '01110'],
  '4': ['00010', '00110', '01010', '10010', '11111', '00010', '00010'],
  '5': ['11111', '10000', '11110', '00001', '00001', '10001', '01110'],
  '6': ['00110', '01000', '10000', '11110', '10001', '10001', '01110'],
  '7': ['11111', '00001', '00010', '00100', '01000', '01000', '01000'],
  '8': ['01110', '10001', '10001', '01110', '10001', '10001', '01110'],
  '9': ['01110', '10001', '10001', '01111', '00001', '00010', '01100'],
  '?': ['01110', '10001', '00001', '00010', '00100', '00000', '00100'],
};

const glyphWidth = 5;
const glyphHeight = 7;

/** Renders `text` (A–Z, 0–9, `?`; others drawn as `?`) centred on a `size` × `size` square. */
export function renderInitials(text: string, size: number, background: Rgb): Uint8Array {
  const characters = [...text.toUpperCase()].slice(0, 2).map((c) => glyphs[c] ?? (glyphs['?'] as string[]));
  const columns = characters.length * glyphWidth + (characters.length - 1);
  const scale = Math.max(
    1,
    Math.min(Math.floor((size * 0.5) / columns), Math.floor((size * 0.5) / glyphHeight)),
  );
  const textWidth = columns * scale;
  const textHeight = glyphHeight * scale;
  const left = Math.floor((size - textWidth) / 2);
  const top = Math.floor((size - textHeight) / 2);

  // One filter byte (0 = none) then one palette index per pixel: 0 background, 1 white.
  const stride = size + 1;
  const raw = new Uint8Array(stride * size);
  characters.forEach((rows, index) => {
    const glyphLeft = left + index * (glyphWidth + 1) * scale;
    for (let row = 0; row < glyphHeight; row += 1) {
      for (let column = 0; column < glyphWidth; column += 1) {
        if ((rows[row] as string)[column] !== '1') continue;
        for (let dy = 0; dy < scale; dy += 1) {
          const y = top + row * scale + dy;
          const start = y * stride + 1 + glyphLeft + column * scale;
          raw.fill(1, start, start + scale);
        }
      }
    }
  });
  return encodePng(size, size, [background, [255, 255, 255]], raw);
}

/** A palette PNG (colour type 3, 8 bits per pixel) from filtered scanlines. */
export function encodePng(
  width: number,
  height: number,
  palette: readonly Rgb[],
  scanlines: Uint8Array,
): Uint8Array {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 3, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('PLTE', Buffer.from(palette.flat())),
    chunk('IDAT', deflateSync(scanlines, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length, 0);
  const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typeAndData), 0);
  return Buffer.concat([length, typeAndData, crc]);
}
