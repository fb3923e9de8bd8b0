import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { importJWK, type JWK, SignJWT } from 'jose';
import { startLocalHost } from '../infra/local/host.ts';
import { scopes } from '../shared/platform/auth/scopes.ts';
import { progress } from './stats.ts';

/**
 * The host the benchmark talks to: a fresh local host on free ports, or (BENCH_URL) one already
 * running from `npm start`, found through `<DATA_DIR>/host.json` and its identity provider's key.
 */
export interface BenchHost {
  url: string;
  env: Record<string, string>;
  dataDir: string;
  ownHost: boolean;
  mint(account: string): Promise<string>;
  stop(): Promise<void>;
}

export async function benchHost(): Promise<BenchHost> {
  let url: string;
  let env: Record<string, string>;
  let dataDir: string;
  let issuer: string;
  let audience: string;
  let privateJwk: JWK;
  let stop = async (): Promise<void> => undefined;
  const given = process.env.BENCH_URL;
  if (given !== undefined) {
    dataDir = resolve(process.env.DATA_DIR ?? '.data');
    const file = join(dataDir, 'host.json');
    if (!existsSync(file))
      throw new Error(`BENCH_URL needs the running host's ${file} (npm start writes it)`);
    const info = JSON.parse(readFileSync(file, 'utf8')) as {
      env: Record<string, string>;
      issuer: string;
      audience: string;
    };
    url = given.replace(/\/$/, '');
    env = info.env;
    issuer = info.issuer;
    audience = info.audience;
    privateJwk = JSON.parse(readFileSync(join(dataDir, 'idp', 'signing-key.json'), 'utf8')) as JWK;
    progress(`using the running host at ${url} (rate limit as configured there)`);
  } else {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-mail-bench-'));
    process.env.LOG_FILE ??= join(dataDir, 'service.log');
    progress('starting the local host (DynamoDB Local, fauxqs, identity provider, gateway, workers) …');
    const host = await startLocalHost({
      port: 0,
      idpPort: 0,
      dataDir,
      seedDomains: 'bench-seed.test=bench-seed',
    });
    url = host.url;
    env = host.env;
    issuer = host.idp.issuer;
    audience = host.idp.audience;
    privateJwk = host.idp.privateJwk as JWK;
    stop = () => host.stop();
    progress(`local host at ${url}`);
  }
  for (const [name, value] of Object.entries(env)) process.env[name] = value;
  const key = await importJWK(privateJwk, 'RS256');
  return {
    url,
    env,
    dataDir,
    ownHost: given === undefined,
    mint: (account) =>
      new SignJWT({ scope: Object.keys(scopes).join(' '), jti: randomUUID() })
        .setProtectedHeader({ alg: 'RS256', kid: privateJwk.kid as string, typ: 'JWT' })
        .setIssuer(issuer)
        .setAudience(audience)
        .setSubject(account)
        .setIssuedAt()
        .setExpirationTime('2h')
        .sign(key),
    stop,
  };
}
