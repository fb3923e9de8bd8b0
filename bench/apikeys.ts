import { addKey } from '../shared/apikeys/add.ts';
import type { BenchHost } from './host.ts';
import { requestsOf, startMeter, stopMeter } from './meter.ts';
import type { Caller } from './service.ts';
import { figure, fmt, fmtFigure } from './stats.ts';
import { checkTarget } from './targets.ts';

/**
 * API keys against JWTs (docs/apikeys.md), side by side in one run: a query by uuid with a warm
 * key and a warm JWT, the first request of a credential nothing on the instance has seen (one read
 * each: the key's item, which carries its account's status; the JWT's account status, beside its
 * signature check), and the table writes a key adds (section 7).
 */
async function timed(url: string, token: string, uuid: string): Promise<number> {
  const t0 = performance.now();
  const response = await fetch(`${url}/message/query-1.0`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message_uuid: uuid }),
  });
  await response.arrayBuffer();
  const ms = performance.now() - t0;
  if (response.status !== 200 && response.status !== 404)
    throw new Error(`query answered ${response.status}`);
  return ms;
}

async function keyFor(account: string): Promise<string> {
  const made = await addKey(
    { account, subject: account, scopes: new Set(['messages:read', 'messages:send']), credential: 'jwt' },
    { name: 'bench', scopes: ['messages:read', 'messages:send'] },
  );
  return made.key;
}

export async function apiKeysSection(
  host: BenchHost,
  who: Caller,
  account: string,
  uuid: string,
  rounds: number,
): Promise<string[]> {
  const key = await keyFor(account);
  const jwt = who.tokens[0] as string;
  const keyTimes: number[] = [];
  const jwtTimes: number[] = [];
  const warmRatios: number[] = [];
  for (let round = -3; round < rounds; round++) {
    // Alternate the order, so neither credential always runs second.
    const keyFirst = round % 2 === 0;
    const a = await timed(host.url, keyFirst ? key : jwt, uuid);
    const b = await timed(host.url, keyFirst ? jwt : key, uuid);
    if (round < 0) continue;
    const [k, j] = keyFirst ? [a, b] : [b, a];
    keyTimes.push(k);
    jwtTimes.push(j);
    warmRatios.push(k / j);
  }
  const firstKey: number[] = [];
  const firstJwt: number[] = [];
  const firstRatios: number[] = [];
  const firstRounds = Math.max(5, Math.round(rounds / 3));
  for (let round = 0; round < firstRounds; round++) {
    const keyAccount = `bench-key-${round}-${Date.now()}`;
    const jwtAccount = `bench-jwt-${round}-${Date.now()}`;
    const freshKey = await keyFor(keyAccount);
    const freshJwt = await host.mint(jwtAccount);
    const keyFirst = round % 2 === 0;
    const a = await timed(host.url, keyFirst ? freshKey : freshJwt, uuid);
    const b = await timed(host.url, keyFirst ? freshJwt : freshKey, uuid);
    const [k, j] = keyFirst ? [a, b] : [b, a];
    firstKey.push(k);
    firstJwt.push(j);
    firstRatios.push(k / j);
  }
  const warmRatio = figure(warmRatios);
  const firstRatio = figure(firstRatios);
  return [
    '### 13. API keys against JWTs (query by uuid, through the local host)',
    '',
    '| request | API key ms | JWT ms | ratio (key / JWT, per round) | target |',
    '|---|---:|---:|---:|---|',
    `| warm (${rounds} rounds) | ${fmtFigure(figure(keyTimes))} | ${fmtFigure(figure(jwtTimes))} | ${fmtFigure(warmRatio, 2)} | ≤ 1.1 ${checkTarget('apikey-warm', fmtFigure(warmRatio, 2), warmRatio.median <= 1.1)} |`,
    `| first of a credential (${firstRounds} rounds, fresh accounts) | ${fmtFigure(figure(firstKey))} | ${fmtFigure(figure(firstJwt))} | ${fmtFigure(firstRatio, 2)} | ≤ 1.2 ${checkTarget('apikey-first', fmtFigure(firstRatio, 2), firstRatio.median <= 1.2)} |`,
    '',
    `The first request of a key is one GetItem: its item, which carries its account's status (a disabled account's keys are marked; docs/decisions/0058-api-key-account-status.md). A JWT's verifies its signature against the identity provider's key set, already fetched by this host, and reads the account's status (one GetItem). A truly new instance also fetches the key set once for JWTs, which the key path never needs: leaving that out, as here, is the stricter comparison.`,
    '',
  ];
}

/** Section 7's line: the table writes of `requests` requests with one key, counted at the SDK. */
export async function keyUsageWrites(host: BenchHost, account: string, uuid: string, requests: number) {
  const key = await keyFor(account);
  const meter = startMeter();
  const t0 = performance.now();
  for (let index = 0; index < requests; index++) await timed(host.url, key, uuid);
  const seconds = (performance.now() - t0) / 1000;
  stopMeter();
  const writes = meter.tableWritesByItem.get('APIKEY') ?? 0;
  const allowed = Math.ceil(seconds / 60);
  const dynamo = requestsOf(meter, 'DynamoDB').total;
  return [
    `API keys: ${requests} queries with one key in ${fmt(seconds, 1)} s wrote ${fmt(writes, 0)} write unit(s) to its item (\`last_used_at\`, at most one a minute: ${allowed} allowed), and made ${dynamo} DynamoDB requests in all (${fmt(dynamo / requests, 2)} a request: the query's GetItem; the key's GetItem once per 30 s). Target: ${checkTarget('apikey-usage-writes', `${fmt(writes, 0)} in ${fmt(seconds, 1)} s`, writes <= allowed)}.`,
    '',
  ];
}
