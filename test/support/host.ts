import { randomUUID } from 'node:crypto';
import { importJWK, SignJWT } from 'jose';
import { inject } from 'vitest';
import { scopes as allScopes } from '../../shared/platform/auth/scopes.ts';
import { openApiProblems } from './contract.ts';
import type { HostInfo } from './host-info.ts';

/** The local host of this run, started by vitest's global setup (test/setup/local-host.ts). */
export function hostInfo(): HostInfo {
  return inject('host');
}

/**
 * Points this test process's AWS SDK at the host's emulators and names its table, queue and
 * bucket, so a test can arrange data through the project's own repositories.
 */
export function useHostEnvironment(): HostInfo {
  const info = hostInfo();
  for (const [name, value] of Object.entries(info.env)) process.env[name] = value;
  return info;
}

export interface TokenOptions {
  account?: string;
  scopes?: readonly string[];
  expiresIn?: string | number;
  claims?: Record<string, unknown>;
  /** Sign for another host (e.g. a secondary host with its own identity provider). */
  signer?: Pick<HostInfo, 'issuer' | 'audience' | 'privateJwk'>;
}

/** A valid token from the local identity provider (RS256, its published key). */
export async function mintToken(options: TokenOptions = {}): Promise<string> {
  const info = options.signer ?? hostInfo();
  const key = await importJWK(info.privateJwk, 'RS256');
  const jwt = new SignJWT({ scope: (options.scopes ?? Object.keys(allScopes)).join(' '), ...options.claims })
    .setProtectedHeader({ alg: 'RS256', kid: info.privateJwk.kid as string, typ: 'JWT' })
    .setIssuer(info.issuer)
    .setAudience(info.audience)
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? '1h');
  if (options.account !== null) jwt.setSubject(options.account ?? 'dev-account');
  return jwt.sign(key);
}

/** A fresh account name, so tests never share state. */
export function uniqueAccount(prefix = 'acct'): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** A fresh domain name under `.test`. */
export function uniqueDomain(prefix = 'd'): string {
  return `${prefix}-${randomUUID().slice(0, 8)}.test`;
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  /** Another host's gateway (default: the host of this test run). */
  baseUrl?: string;
  /**
   * Every response is checked against docs/openapi.json (status, headers, body schema) and the call
   * fails on any difference. Only a test that deliberately receives a non-conforming answer opts
   * out, by giving the reason here.
   */
  skipContract?: string;
}

/** Thrown by `call()` when a response does not match the OpenAPI document. */
export class ContractViolation extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`Response does not match docs/openapi.json:\n${problems.join('\n')}`);
    this.name = 'ContractViolation';
    this.problems = problems;
  }
}

/** One HTTP call to the local gateway; the body is parsed as JSON when it is JSON. */
export async function call<T = any>(
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<ApiResponse<T>> {
  const url = new URL(path, options.baseUrl ?? hostInfo().url);
  for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, value);
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(url, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  const result = { status: response.status, headers: response.headers, body: parsed as T, text };
  if (options.skipContract === undefined || options.skipContract.trim() === '') {
    const problems = openApiProblems(method, url.pathname, result);
    if (problems.length > 0) throw new ContractViolation(problems);
  }
  return result;
}

/**
 * What looks like a stack trace or an internal name. `stack` only as a word: a DKIM key's base64
 * in a DNS record may hold the letters (about one 2048-bit key in 80,000).
 */
const internals = /\n\s+at |node_modules|\.ts:\d+|Exception\b|\bstack\b/i;

/** True when nothing in a response body looks like a stack trace or an internal name. */
export function hasNoInternals(text: string): boolean {
  return !internals.test(text);
}

/** What in a response body looks internal, with some context, for an assertion's message. */
export function internalsIn(text: string): string | undefined {
  const found = internals.exec(text);
  return found === null ? undefined : text.slice(Math.max(0, found.index - 60), found.index + 60);
}
