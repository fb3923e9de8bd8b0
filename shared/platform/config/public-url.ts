import { envString } from './env.ts';

/**
 * The base URL at which recipients' mail clients reach the public routes (one-click unsubscribe,
 * tracking): `PUBLIC_API_URL`, without a trailing slash. On AWS the stack sets it to the API's URL
 * (or to a custom domain given by context); the local host sets it to its gateway's address.
 */
export function publicApiUrl(): string {
  const url = envString('PUBLIC_API_URL');
  if (url === undefined) throw new Error('PUBLIC_API_URL is not set: links in mail need the public base URL');
  const parsed = new URL(url);
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new Error(`PUBLIC_API_URL must be an http(s) URL, got ${parsed.protocol}`);
  }
  return url.replace(/\/+$/, '');
}
