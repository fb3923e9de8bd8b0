/**
 * The submission server is a client of the public API (docs/smtp.md): it checks a key with
 * `GET /whoami-1.0` and sends with `POST /message/add-1.0`, so every rule of the API applies unchanged.
 */
export interface Credential {
  account: string;
  scopes: string[];
  credential: string;
  key_id?: string;
  domains: string[];
}

export interface ApiError {
  code: number;
  message: string;
  details?: { field?: string; message?: string }[];
}

export type ApiAnswer<T> =
  | { ok: true; data: T }
  | { ok: false; status: number; error: ApiError }
  | { ok: false; status: 0; error: ApiError; unreachable: true };

export interface ApiClient {
  whoami(key: string): Promise<ApiAnswer<Credential>>;
  addMessage(
    key: string,
    body: unknown,
    idempotencyKey?: string,
  ): Promise<ApiAnswer<{ message_uuid: string }>>;
}

export function apiClient(baseUrl: string, timeoutMs = 30_000): ApiClient {
  async function request<T>(
    method: string,
    path: string,
    key: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiAnswer<T>> {
    let response: Response;
    try {
      response = await fetch(new URL(path, baseUrl), {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          'user-agent': 'svc-mail-submission',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        ...(body === undefined ? {} : { body: Buffer.isBuffer(body) ? body : JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch {
      return {
        ok: false,
        status: 0,
        unreachable: true,
        error: { code: 1, message: 'The API could not be reached' },
      };
    }
    const text = await response.text().catch(() => '');
    let parsed: { data?: T; error?: ApiError } = {};
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      parsed = {};
    }
    if (response.ok && parsed.data !== undefined) return { ok: true, data: parsed.data };
    return {
      ok: false,
      status: response.status,
      error: parsed.error ?? { code: response.status >= 500 ? 2 : 107, message: `HTTP ${response.status}` },
    };
  }
  return {
    whoami: (key) => request<Credential>('GET', '/whoami-1.0', key),
    addMessage: (key, body, idempotencyKey) =>
      request<{ message_uuid: string }>(
        'POST',
        '/message/add-1.0',
        key,
        body,
        idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
      ),
  };
}
