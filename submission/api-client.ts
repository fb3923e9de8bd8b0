import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

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
    let response: { status: number; text: string };
    try {
      response = await send(new URL(path, baseUrl), {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          'user-agent': 'svc-mail-submission',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body:
          body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body)),
        timeoutMs,
      });
    } catch {
      return {
        ok: false,
        status: 0,
        unreachable: true,
        error: { code: 1, message: 'The API could not be reached' },
      };
    }
    let parsed: { data?: T; error?: ApiError } = {};
    try {
      parsed = JSON.parse(response.text) as typeof parsed;
    } catch {
      parsed = {};
    }
    const ok = response.status >= 200 && response.status < 300;
    if (ok && parsed.data !== undefined) return { ok: true, data: parsed.data };
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

/**
 * One HTTP request with Node's own client, whose keep-alive agent reuses connections. Not `fetch`:
 * it copies a byte body before sending it, and a message's request body is megabytes, held once
 * per transaction in flight (the memory target of docs/smtp.md).
 */
function send(
  url: URL,
  options: { method: string; headers: Record<string, string>; body: Buffer | undefined; timeoutMs: number },
): Promise<{ status: number; text: string }> {
  const start = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = start(
      url,
      {
        method: options.method,
        headers: {
          ...options.headers,
          ...(options.body === undefined ? {} : { 'content-length': String(options.body.length) }),
        },
        signal: AbortSignal.timeout(options.timeoutMs),
      },
      (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.once('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        response.once('error', reject);
      },
    );
    request.once('error', reject);
    request.end(options.body);
  });
}
