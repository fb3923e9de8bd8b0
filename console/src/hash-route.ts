/**
 * Hash routes (`#/message/<uuid>?…`): the page and its filters live in the address, so a reload,
 * a shared link or a new sign-in after an expired session comes back to the same view, and the
 * server (the local gateway, CloudFront) only ever serves one document. Pure: no DOM.
 */
export interface Route {
  page: string;
  id: string | undefined;
  query: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const [path = '', search = ''] = hash.replace(/^#\/?/, '').split('?');
  const [page = '', id] = path.split('/').map((part) => decodeURIComponent(part));
  return { page: page || 'activity', id: id || undefined, query: new URLSearchParams(search) };
}

export function href(page: string, id?: string, query: Record<string, string | undefined> = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (value !== undefined && value !== '') search.set(name, value);
  const path = id === undefined ? page : `${page}/${encodeURIComponent(id)}`;
  const text = search.toString();
  return `#/${path}${text === '' ? '' : `?${text}`}`;
}
