import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import { join, resolve } from 'node:path';
import { localNames } from '../resources/definitions.ts';
import { settled } from './after-response-work.ts';
import { recordAwsCalls } from './aws-call-recorder.ts';
import { consoleSignIn } from './console-identity.ts';
import { type ConsoleSite, consoleUrls } from './console-site.ts';
import { type Emulator, startDynamoDbLocal, startSqsAndS3 } from './emulators.ts';
import { StartupError } from './free-port.ts';
import { type FunctionCode, removeFunctionBundles, useFunctionCode } from './function-code.ts';
import { startGateway } from './gateway.ts';
import { type IdentityProvider, startIdentityProvider } from './identity-provider.ts';
import { claimDataDir, recordHost, releaseDataDir } from './pid-file.ts';
import { type ProvisionedResources, provision } from './provision.ts';
import { type LocalSubmission, startLocalSubmission } from './submission.ts';
import { type LocalWorker, localWorkers } from './workers.ts';

export interface LocalHostOptions {
  host?: string;
  /** Gateway port; 0 picks a free one. */
  port?: number;
  /** Identity-provider port; 0 picks a free one. */
  idpPort?: number;
  dataDir?: string;
  /**
   * `persistent` keeps DynamoDB Local's and fauxqs' state in DATA_DIR (`npm start`), so messages,
   * domains, keys, suppressions and webhooks survive a restart; `memory` (tests, the benchmark)
   * forgets everything when the host stops.
   */
  state?: LocalState;
  seedDomains?: string;
  /** Start the background workers (event-source loop, schedules, SMTP server). */
  workers?: boolean;
  /** SMTP submission ports (STARTTLS, implicit TLS); 0 picks a free one. */
  submissionPort?: number;
  submissionsPort?: number;
  /** Run the functions' TypeScript sources (default) or the bundles `cdk synth` builds (function-code.ts). */
  code?: FunctionCode;
  /** Test runs only: record every AWS call of every function to this file (aws-call-recorder.ts). */
  awsCallLog?: string;
  log?: (line: string) => void;
}

export type LocalState = 'persistent' | 'memory';

/** Where a persistent host keeps each emulator's state, under DATA_DIR. */
export function stateDirs(dataDir: string): { dynamo: string; sqsS3: string } {
  return { dynamo: join(dataDir, 'dynamodb'), sqsS3: join(dataDir, 'fauxqs') };
}

export interface LocalHost {
  url: string;
  dataDir: string;
  state: LocalState;
  idp: IdentityProvider;
  /** Whom the console signs in with (config.json): AUTH_ISSUER, else the local identity provider. */
  consoleSite: ConsoleSite;
  resources: ProvisionedResources;
  /** Every variable the handlers run with; tests reuse it to reach the same emulators. */
  env: Record<string, string>;
  emulators: { dynamo: Emulator; sqsS3: Emulator };
  /** The SMTP submission server (docs/smtp.md) and the self-signed certificate it presents. */
  submission: LocalSubmission;
  stop(): Promise<void>;
}

const region = 'us-east-1';

/**
 * Brings up the whole service on one machine: DynamoDB Local, fauxqs (SQS + S3), the local
 * identity provider, the gateway in front of the real handler modules, and the workers.
 * Handlers read their configuration from process.env, exactly as on Lambda.
 */
export async function startLocalHost(options: LocalHostOptions = {}): Promise<LocalHost> {
  const log = options.log ?? (() => undefined);
  const dataDir = resolve(options.dataDir ?? process.env.DATA_DIR ?? '.data');
  mkdirSync(dataDir, { recursive: true });

  // Whatever has started is stopped again if a later step fails (a port taken meanwhile, a bad
  // seed), so a failed start never leaves DynamoDB Local's Java process or a server behind.
  const started: { name: string; stop: () => Promise<void> }[] = [];
  const stopStarted = async () => {
    for (const part of started.reverse()) await part.stop().catch(() => undefined);
    started.length = 0;
  };
  try {
    return await startParts(options, log, dataDir, started);
  } catch (error) {
    await stopStarted();
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      const port = (error as { port?: number }).port;
      throw new StartupError(
        `port ${port ?? ''} became busy while starting: set PORT (gateway), IDP_PORT (identity provider), SUBMISSION_PORT or SUBMISSIONS_PORT (SMTP submission) to a free port and run npm start again`,
      );
    }
    throw error;
  }
}

async function startParts(
  options: LocalHostOptions,
  log: (line: string) => void,
  dataDir: string,
  started: { name: string; stop: () => Promise<void> }[],
): Promise<LocalHost> {
  const state = options.state ?? 'memory';
  useFunctionCode(options.code ?? 'source');
  if (options.code === 'bundles') log('running the functions from their bundles (as cdk synth builds them)');
  if (options.awsCallLog !== undefined) recordAwsCalls(options.awsCallLog);
  const dirs = state === 'persistent' ? stateDirs(dataDir) : undefined;
  // One host, and so one DynamoDB Local, per data folder.
  await claimDataDir(dataDir, log);

  log(`starting DynamoDB Local and fauxqs (state: ${state}) …`);
  const emulators = await Promise.allSettled([
    startDynamoDbLocal(undefined, dirs?.dynamo),
    startSqsAndS3(0, dirs?.sqsS3),
  ]);
  for (const result of emulators)
    if (result.status === 'fulfilled') started.push({ name: 'emulator', stop: result.value.stop });
  const failed = emulators.find((result) => result.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  const [dynamo, sqsS3] = emulators.map((result) => (result as PromiseFulfilledResult<Emulator>).value) as [
    Emulator,
    Emulator,
  ];
  recordHost(dataDir, dynamo.pid);
  // First in the list, so released last: after the emulators have stopped.
  started.unshift({ name: 'pid file', stop: async () => releaseDataDir(dataDir) });
  const resources = await provision({
    dynamoEndpoint: dynamo.endpoint,
    sqsS3Endpoint: sqsS3.endpoint,
    region,
    names: localNames,
  });
  const idp = await startIdentityProvider(dataDir, options.idpPort ?? 0);
  started.push({ name: 'identity provider', stop: () => idp.stop() });
  // Read before the defaults below fill AUTH_ISSUER in with the local identity provider.
  const consoleSite = consoleSignIn(process.env, idp.issuer);

  const env: Record<string, string> = {
    AWS_REGION: region,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_ENDPOINT_URL_SQS: sqsS3.endpoint,
    AWS_ENDPOINT_URL_S3: sqsS3.endpoint,
    TABLE_NAME: resources.tableName,
    QUEUE_URL: resources.queueUrl,
    DEAD_LETTER_QUEUE_URL: resources.deadLetterQueueUrl,
    BUCKET_NAME: resources.bucketName,
    TABLE_STREAM_ARN: resources.tableStreamArn,
    WEBHOOK_QUEUE_URL: resources.webhookQueueUrl,
    WEBHOOK_DEAD_LETTER_QUEUE_URL: resources.webhookDeadLetterQueueUrl,
    INBOUND_QUEUE_URL: resources.inboundQueueUrl,
    INBOUND_DEAD_LETTER_QUEUE_URL: resources.inboundDeadLetterQueueUrl,
    // Receivers on this machine (loopback, private networks) are allowed locally; see docs/webhooks.md.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    AUTH_ISSUER: process.env.AUTH_ISSUER ?? idp.issuer,
    AUTH_AUDIENCE: process.env.AUTH_AUDIENCE ?? idp.audience,
    AUTH_JWKS_URL: process.env.AUTH_JWKS_URL ?? idp.jwksUrl,
    DATA_DIR: dataDir,
  };
  // The gateway listens before the workers start: the sender puts its URL into the unsubscribe
  // links of broadcasts (PUBLIC_API_URL), and a queue kept from an earlier run is sent at once.
  const gateway = await startGateway(options.host ?? '127.0.0.1', options.port ?? 3000, consoleSite);
  started.push({
    name: 'gateway',
    stop: async () => {
      gateway.server.closeAllConnections();
      await new Promise<void>((done) => gateway.server.close(() => done()));
    },
  });
  env.PUBLIC_API_URL = gateway.url;
  // Variables already set by the operator win, so a broken configuration can be tried on purpose.
  for (const [name, value] of Object.entries(env)) {
    if (process.env[name] === undefined) process.env[name] = value;
    else env[name] = process.env[name] as string;
  }

  const workers: LocalWorker[] = [];
  if (options.workers !== false) {
    for (const create of localWorkers) {
      const worker = create();
      await worker.start({ dataDir, env });
      workers.push(worker);
      started.push({ name: worker.name, stop: () => worker.stop() });
      log(`worker ${worker.name} running`);
    }
    for (const [name, value] of Object.entries(env)) process.env[name] ??= value;
  }

  const { registerDomain, parseSeedDomains } = await import('../../shared/domains/registry.ts');
  for (const { domain, account } of parseSeedDomains(
    options.seedDomains ?? process.env.SEED_DOMAINS ?? 'example.test=dev-account',
  )) {
    const result = await registerDomain(domain, account);
    log(`domain ${domain} → account ${account}: ${result}`);
  }

  let server: Server | undefined = gateway.server;
  // Links in mail (tracking) point at this gateway; the workers share this process's environment.
  process.env.PUBLIC_API_URL ??= gateway.url;
  env.PUBLIC_API_URL = process.env.PUBLIC_API_URL;
  idp.allowConsole(consoleUrls(gateway.url));
  started.push({ name: 'gateway', stop: () => closeServer(gateway.server) });
  const submission = await startLocalSubmission({
    apiUrl: gateway.url,
    dataDir,
    host: options.host ?? '127.0.0.1',
    port: options.submissionPort ?? 0,
    securePort: options.submissionsPort ?? 0,
  });
  log(`SMTP submission on ${submission.port} (STARTTLS) and ${submission.securePort} (TLS)`);
  // From here on the host is up: stop() below owns every part.
  started.length = 0;

  return {
    url: gateway.url,
    dataDir,
    state,
    idp,
    consoleSite,
    resources,
    env,
    emulators: { dynamo, sqsS3 },
    submission,
    stop: async () => {
      if (server !== undefined) {
        const closing = server;
        server = undefined;
        closing.closeAllConnections();
        await new Promise<void>((done) => closing.close(() => done()));
      }
      // Functions that answered and are still recording (routes declared afterResponse) finish first.
      await settled();
      await submission.stop();
      for (const worker of workers.reverse()) await worker.stop().catch(() => undefined);
      await idp.stop();
      await Promise.all([dynamo.stop(), sqsS3.stop().catch(() => undefined)]);
      removeFunctionBundles();
      releaseDataDir(dataDir);
    },
  };
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise<void>((done) => server.close(() => done()));
}
