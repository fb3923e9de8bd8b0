import type { GravatarOutcome } from '../model/avatars.ts';

/** Image types accepted from Gravatar, with their magic bytes; never SVG (script in our bucket). */
const imageTypes: ReadonlyArray<{ type: string; magic: (bytes: Uint8Array) => boolean }> = [
  { type: 'image/png', magic: (b) => b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 },
  { type: 'image/jpeg', magic: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { type: 'image/gif', magic: (b) => b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 },
  {
    type: 'image/webp',
    magic: (b) => b[0] === 0x52 && b[1] === 0x49 && b[8] === 0x57 && b[9] === 0x45 && b[10] === 0x42,
  },
];

/** Far above any real Gravatar image (512 px JPEG ≈ 100 KB); a bigger answer is treated as a failure. */
const maxBytes = 2 * 1024 * 1024;

export interface GravatarRequest {
  baseUrl: string;
  hash: string;
  size: number;
  timeoutMs: number;
}

/**
 * Asks Gravatar for the avatar of a SHA-256 address hash with `d=404`, so "no avatar" is a 404 rather
 * than Gravatar's own default picture. Never throws: a timeout, a network error, a 5xx, a wrong type or
 * an oversized body is `failed`, and the caller falls back to the generated image.
 */
export async function fetchGravatar(request: GravatarRequest): Promise<GravatarOutcome> {
  const url = `${request.baseUrl}/${request.hash}?s=${request.size}&d=404&r=g`;
  try {
    const response = await fetch(url, {
      signal: AbortSignal.timeout(request.timeoutMs),
      // Never follow a redirect: the configured base URL is the only host the service fetches from
      // (a redirect could point it at an internal address). A redirect counts as "no Gravatar".
      redirect: 'manual',
      headers: { accept: 'image/png, image/jpeg, image/gif, image/webp' },
    });
    if (response.status === 404 || (response.status >= 300 && response.status < 400)) {
      await response.body?.cancel();
      return { kind: 'absent' };
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      return { kind: 'failed', reason: `status ${response.status}` };
    }
    const declared = (response.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
    const length = Number(response.headers.get('content-length') ?? '0');
    if (length > maxBytes) {
      await response.body?.cancel();
      return { kind: 'failed', reason: 'too large' };
    }
    const bytes = await readCapped(response, maxBytes);
    if (bytes === undefined) return { kind: 'failed', reason: 'too large' };
    const match = imageTypes.find((candidate) => candidate.magic(bytes));
    if (match === undefined || (declared !== '' && declared !== match.type)) {
      return { kind: 'failed', reason: 'not an image' };
    }
    return { kind: 'found', contentType: match.type, bytes };
  } catch (error) {
    const name = error instanceof Error ? error.name : 'error';
    return { kind: 'failed', reason: name === 'TimeoutError' ? 'timeout' : 'unreachable' };
  }
}

/** The body, or undefined as soon as it exceeds `limit` bytes. The timeout signal covers this read too. */
async function readCapped(response: Response, limit: number): Promise<Uint8Array | undefined> {
  if (response.body === null) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const part of response.body) {
    total += part.length;
    // Leaving the loop early cancels the stream (and with it the connection).
    if (total > limit) return undefined;
    chunks.push(part);
  }
  return Buffer.concat(chunks);
}
