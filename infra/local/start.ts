import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensureConsoleBuilt } from '../../console/build.ts';
import { envNumber, envString } from '../../shared/platform/config/env.ts';
import { requireFreePorts } from './free-port.ts';
import { type LocalHost, type LocalState, startLocalHost, stateDirs } from './host.ts';
import { startMetricsSummary } from './metrics-summary.ts';
import { killRecordedDynamo } from './pid-file.ts';

/**
 * `npm start`: the whole service on this machine, with a printed token and a curl to try. State
 * persists in DATA_DIR across restarts; `npm start -- --reset` starts clean; `LOCAL_STATE=memory`
 * keeps nothing (the tests' secondary hosts use it). `npm start -- --bundles` (or `LOCAL_CODE=bundles`)
 * runs the functions from the bundles `cdk synth` deploys instead of their TypeScript sources.
 */
const started = Date.now();
const dataDir = resolve(envString('DATA_DIR', '.data') as string);
const state: LocalState = envString('LOCAL_STATE', 'persistent') === 'memory' ? 'memory' : 'persistent';
const bind = envString('HOST', '127.0.0.1') as string;
const port = envNumber('PORT', 3000);
const idpPort = envNumber('IDP_PORT', 3001);
const submissionPort = envNumber('SUBMISSION_PORT', 2587);
const submissionsPort = envNumber('SUBMISSIONS_PORT', 2465);
let host: LocalHost;
try {
  // Ports first, before any child process exists: a busy port names the variable that moves it.
  await requireFreePorts([
    { variable: 'PORT', port, host: bind },
    { variable: 'IDP_PORT', port: idpPort },
    { variable: 'SUBMISSION_PORT', port: submissionPort, host: bind },
    { variable: 'SUBMISSIONS_PORT', port: submissionsPort, host: bind },
  ]);
  if (process.argv.includes('--reset')) {
    // Only what the host itself writes there, so a DATA_DIR pointed at a shared folder loses nothing else.
    const { dynamo, sqsS3 } = stateDirs(dataDir);
    for (const path of [dynamo, sqsS3, 'outbox', 'idp', 'dkim-wrapping.key', 'host.json'])
      rmSync(resolve(dataDir, path), { recursive: true, force: true });
    process.stdout.write(`  --reset: removed the local state in ${dataDir}\n`);
  }
  // The web console is built by npm ci; a checkout whose console sources changed since is rebuilt here.
  await ensureConsoleBuilt((line) => process.stdout.write(`  ${line}\n`));
  host = await startLocalHost({
    host: bind,
    port,
    idpPort,
    submissionPort,
    submissionsPort,
    dataDir,
    state,
    code: process.argv.includes('--bundles') || envString('LOCAL_CODE') === 'bundles' ? 'bundles' : 'source',
    ...(envString('AWS_CALL_LOG') === undefined ? {} : { awsCallLog: envString('AWS_CALL_LOG') as string }),
    log: (line) => process.stdout.write(`  ${line}\n`),
  });
} catch (error) {
  // startLocalHost has already stopped whatever it started. A StartupError says what to do; any
  // other failure is shown by its message, without a stack trace.
  process.stderr.write(`\nnpm start failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
const token = await host.idp.mintToken();
// Written beside and renamed into place: whoever waits for host.json (the admin command, tests)
// never reads it half written.
const hostFile = join(host.dataDir, 'host.json');
writeFileSync(
  `${hostFile}.tmp`,
  JSON.stringify(
    {
      url: host.url,
      env: host.env,
      issuer: host.idp.issuer,
      audience: host.idp.audience,
      pid: process.pid,
      // The inbound mail server (SES receiving stand-in): send mail for receiving domains here.
      inbound_smtp_port: Number(new URL(host.env.INBOUND_SMTP_URL as string).port),
      // SMTP submission (docs/smtp.md): STARTTLS and implicit TLS, an API key as the password.
      submission_port: host.submission.port,
      submissions_port: host.submission.securePort,
      // The emulators themselves (the env may point elsewhere on purpose), for tests that break them.
      emulators: {
        dynamo: { endpoint: host.emulators.dynamo.endpoint, pid: host.emulators.dynamo.pid },
        sqsS3: { endpoint: host.emulators.sqsS3.endpoint },
      },
    },
    null,
    2,
  ),
);
renameSync(`${hostFile}.tmp`, hostFile);

process.stdout.write(`
svc-mail is running at ${host.url}   (started in ${((Date.now() - started) / 1000).toFixed(1)} s)

  Console         ${host.url}/console/   (${
    host.consoleSite.builtIn
      ? "sign in on the local identity provider's page"
      : `signs in at ${host.consoleSite.issuer} as client ${host.consoleSite.clientId}`
  })
  DynamoDB Local  ${host.env.AWS_ENDPOINT_URL_DYNAMODB}
  SQS + S3        ${host.env.AWS_ENDPOINT_URL_SQS}   (fauxqs)
  Identity        ${host.idp.issuer}   (OpenID provider; keys at ${host.env.AUTH_JWKS_URL})
  Inbound SMTP    ${host.env.INBOUND_SMTP_URL}   (mail for receiving domains: npm run admin -- domains receiving <domain> on)
  SMTP submission ${bind}:${host.submission.port} (STARTTLS), ${bind}:${host.submission.securePort} (TLS)   (password: an API key; self-signed certificate in ${join(host.dataDir, 'submission-tls.json')})
  Data dir        ${host.dataDir}   (outbox/: every e-mail the local mail server received)
  State           ${
    host.state === 'persistent'
      ? `kept in ${host.dataDir} across restarts (npm start -- --reset starts clean)`
      : 'in memory: forgotten when this process stops (LOCAL_STATE=memory)'
  }

A development token for account "dev-account" with every scope (valid 12 h):

export TOKEN=${token}

Try:
  curl -s ${host.url}/health
  curl -s -X POST ${host.url}/message/add-1.0 -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \\
    -d '{"message_sender":"app@example.test","from":["App <app@example.test>"],"to":["someone@example.net"],"subject":"Hello","content":{"kind":"text_only","text":"Hi there"}}'

Send over SMTP with an API key (curl -s -X POST ${host.url}/apikey/add-1.0 -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"name":"smtp"}'):
  swaks --server ${bind}:${host.submission.port} --tls --auth PLAIN --auth-user apikey --auth-password "$API_KEY" \\
    --from app@example.test --to someone@example.net --header 'Subject: Hello over SMTP'

Press Ctrl+C to stop.
`);

// One line a minute with the message counters the handlers published (embedded metric format).
startMetricsSummary((line) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`));

let stopping = false;
function stopAndExit(code: number): void {
  if (stopping) return;
  stopping = true;
  process.stdout.write('stopping …\n');
  // A stop that hangs must not keep the process (and its Java child) alive.
  setTimeout(() => process.exit(code), 15_000).unref();
  host.stop().then(
    () => process.exit(code),
    () => process.exit(1),
  );
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stopAndExit(0));

// A promise a handler or worker left behind and that rejected later is that request's failure,
// not the host's: logged, and the host keeps serving (Node's default would end the process).
process.on('unhandledRejection', (reason) => {
  process.stderr.write(
    `[${new Date().toISOString()}] unhandled rejection (the host keeps running): ${
      reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)
    }\n`,
  );
});
// An exception outside any request leaves the process in an unknown state: stop everything it
// started, DynamoDB Local included, and end with an error.
process.on('uncaughtException', (error) => {
  process.stderr.write(`\nthe local host failed and stops: ${error.stack ?? error.message}\n`);
  stopAndExit(1);
});
// Whatever way the process ends, its DynamoDB Local does not outlive it.
process.on('exit', () => killRecordedDynamo(host.dataDir));
