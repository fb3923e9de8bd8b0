import createClient from 'openapi-fetch';
import type { paths } from '../../clients/openapi.ts';
import type { Session } from './auth.ts';

/**
 * The public API, typed by the OpenAPI document (clients/openapi.ts) through openapi-fetch, with
 * the signed-in user's token on every request: the console has no other way in.
 */
export type ApiClient = ReturnType<typeof createClient<paths>>;

export interface ErrorDetail {
  field?: string;
  message: string;
}

/** An answer in the API's error envelope (or a network failure, without a code). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number | undefined,
    message: string,
    readonly details: readonly ErrorDetail[] = [],
    readonly requestId: string | undefined = undefined,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

let client: ApiClient | undefined;
let session: Session | undefined;

export function connectApi(baseUrl: string, signedIn: Session): void {
  session = signedIn;
  client = createClient<paths>({ baseUrl: new URL(baseUrl, document.baseURI).href.replace(/\/$/, '') });
  client.use({
    async onRequest({ request }) {
      request.headers.set('authorization', `Bearer ${await signedIn.accessToken()}`);
      return request;
    },
  });
}

export function api(): ApiClient {
  if (client === undefined) throw new Error('The API is used before sign-in');
  return client;
}

export function currentSession(): Session {
  if (session === undefined) throw new Error('No session yet');
  return session;
}

interface Answer<D> {
  data?: { data: D };
  error?: unknown;
  response: Response;
}

/**
 * The `data` of a successful answer. An error answer becomes an ApiError; an expired or refused
 * token starts a new sign-in that comes back to the same page.
 */
export async function dataOf<D>(request: Promise<Answer<D>>): Promise<D> {
  let answer: Answer<D>;
  try {
    answer = await request;
  } catch (error) {
    throw new ApiError(
      0,
      undefined,
      `The API could not be reached: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (answer.data !== undefined) return answer.data.data;
  const body = (answer.error ?? {}) as {
    error?: { code?: number; message?: string; details?: ErrorDetail[] };
  };
  const code = body.error?.code;
  if (answer.response.status === 401 && (code === 105 || code === 110)) await currentSession().renew(code);
  throw new ApiError(
    answer.response.status,
    code,
    body.error?.message ?? `HTTP ${answer.response.status}`,
    body.error?.details ?? [],
    answer.response.headers.get('x-request-id') ?? undefined,
  );
}
