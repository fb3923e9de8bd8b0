import { submissionSettings } from './config.ts';
import { createSubmissionServer } from './server.ts';

/**
 * The container's entry point (submission/Dockerfile): the API's address in `API_URL`, the
 * certificate chain and key in `TLS_CERT` and `TLS_KEY` (the stack injects them from the Secrets
 * Manager secret named by context), and it listens on 2587 (STARTTLS) and 2465 (TLS); the load
 * balancer also maps 587 and 465 to them.
 */
function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value.trim() === '') {
    process.stderr.write(`${name} is required (docs/smtp.md, "On AWS")\n`);
    process.exit(1);
  }
  return value;
}

const server = createSubmissionServer({
  ...submissionSettings(),
  apiUrl: required('API_URL'),
  tls: { cert: required('TLS_CERT'), key: required('TLS_KEY') },
});
const ports = await server.listen(
  Number(process.env.SUBMISSION_PORT ?? 2587),
  Number(process.env.SUBMISSIONS_PORT ?? 2465),
  '0.0.0.0',
);
process.stdout.write(
  `${JSON.stringify({ level: 'INFO', message: 'smtp submission listening', service: 'smtp-submission', ...ports })}\n`,
);
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.on(signal, () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
