import { defaultLimits, type SubmissionOptions } from './server.ts';

/**
 * The server's settings from the environment (docs/smtp.md, "Settings"), the same locally and in
 * the container; each has a default, so only the API's address is needed.
 */
function number(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const value = env[name];
  if (value === undefined || value.trim() === '') return undefined;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0)
    throw new Error(`${name} must be a non-negative number, not "${value}"`);
  return parsed;
}

export function submissionSettings(
  env: NodeJS.ProcessEnv = process.env,
): Omit<SubmissionOptions, 'apiUrl' | 'tls' | 'log' | 'api'> {
  const settings = {
    hostName: env.SUBMISSION_HOST_NAME,
    maxMessageBytes: number(env, 'SUBMISSION_MAX_MESSAGE_BYTES'),
    credentialTtlMs: number(env, 'SUBMISSION_CREDENTIAL_TTL_MS'),
    commandTimeoutMs: number(env, 'SUBMISSION_COMMAND_TIMEOUT_MS'),
    dataTimeoutMs: number(env, 'SUBMISSION_DATA_TIMEOUT_MS'),
    maxConnectionsPerAddress: number(env, 'SUBMISSION_MAX_CONNECTIONS_PER_ADDRESS'),
    maxConnectionsPerKey: number(env, 'SUBMISSION_MAX_CONNECTIONS_PER_KEY'),
    authFailureDelayMs: number(env, 'SUBMISSION_AUTH_FAILURE_DELAY_MS') ?? defaultLimits.authFailureDelayMs,
    maxAuthFailuresPerAddress: number(env, 'SUBMISSION_MAX_AUTH_FAILURES'),
  };
  return Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined));
}
