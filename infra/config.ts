import {
  minRetentionDays,
  retentionMarginDays,
  schedulingHorizonDays,
} from '../shared/messages/model/scheduling.ts';
import { queueDefinition } from './resources/definitions.ts';
/**
 * The deployment's configuration, read from CDK context (`cdk.json` or `-c name=value`) and
 * validated at synth time, so a bad value fails `cdk synth` with a message that names the key
 * instead of failing a function at run time. Values from `-c` arrive as strings, values from
 * cdk.json as JSON; both are accepted.
 */

export type MailTransport = 'ses' | 'smtp';

export interface ServiceConfig {
  authIssuer: string;
  authAudience: string;
  authJwksUrl: string;
  authAccountClaim: string;
  /** When set, tokens must carry this `typ` header (e.g. `at+jwt`); off by default. */
  authRequiredTyp: string | undefined;
  /** When set, tokens must carry this `token_use` claim (Amazon Cognito: `access`); off by default. */
  authRequiredTokenUse: string | undefined;
  serverTimeZone: string;
  /** IPv4 and IPv6 networks answered with 401 / code 103 by the WAF and the functions. */
  blockedCidrs: string[];
  /** Per-caller limit (requests per second) and burst: the WAF rate rule and the functions. */
  rateLimitRps: number;
  rateLimitBurst: number;
  /** Whole-stage API Gateway throttling (all callers together). */
  stageThrottleRps: number;
  stageThrottleBurst: number;
  /**
   * SES identities (domains or addresses) the stack creates and the sender may send as, and no
   * other; required when mailTransport is `ses` (there is no "every identity" default).
   */
  sesIdentities: string[];
  /**
   * Region whose SES identities and sending quota the service uses. SES is called in the stack's
   * region, so when set the deployment fails unless the stack is deployed there (a CloudFormation rule).
   */
  sesRegion: string | undefined;
  mailTransport: MailTransport;
  /**
   * Subdomain of each sending domain used as the envelope sender's domain (MAIL FROM), `bounce`
   * by default: `<message_uuid>@bounce.<domain>`; with SES, configure the same custom MAIL FROM
   * domain on each identity (docs/deploy.md).
   */
  mailFromSubdomain: string;
  /** Relay URL when mailTransport is `smtp` (a secret-free URL; credentials belong elsewhere). */
  smtpUrl: string | undefined;
  /** Secrets Manager secret (ARN) with the relay's `{"username","password"}`, read at cold start. */
  smtpSecretArn: string | undefined;
  /** Days message bodies and attachments are kept in S3 (received mail too). */
  retentionDays: number;
  /**
   * SES receives mail for the stack (docs/inbound.md): one receipt rule for every domain SES verified
   * in the account and region, made the active rule set; which domains receive is the table's
   * `receiving` switch, so none is listed here. Off: no receipt rule set.
   */
  receiving: boolean;
  /** Days function and access logs are kept. */
  logRetentionDays: number;
  corsOrigins: string[];
  gravatarBaseUrl: string;
  avatarTtlSeconds: number;
  /**
   * The base URL of the links in mail (one-click unsubscribe, docs/streams.md) when the API is
   * reached at a custom domain; absent: the API's own URL.
   */
  unsubscribeBaseUrl: string | undefined;
  /** Optional address subscribed to the alarm topic. */
  alarmEmail: string | undefined;
  /**
   * SES's account-level suppression list as a backstop behind the per-account lists (off by
   * default): one list shared by every tenant, so one tenant's complaints stop another tenant's
   * mail (docs/deliverability.md, "SES's own suppression list"). Turn it on for a deployment that
   * serves one organisation.
   */
  sesAccountSuppression: boolean;
  /**
   * The most webhook-delivery invocations at once (the event source mapping's maximum concurrency):
   * however many endpoints fail or answer slowly, webhooks never take more of the region's Lambda
   * concurrency than this, so the API and the sender keep theirs (docs/webhooks.md).
   */
  webhookConcurrency: number;
  /**
   * Reserved concurrency of each function that renders or parses untrusted input behind the API
   * (infra/stack/untrusted-input.ts): a flood of hostile templates or previews runs out of these
   * and nothing else (docs/security.md, "Limits").
   */
  untrustedInputConcurrency: number;
  /**
   * The most sender invocations at once on the send queue (bounds the sending rate toward SES; raise
   * it with the SES sending quota), on the dead-letter queue (the function that marks given-up
   * messages failed) and on the inbound queue: no queue can take the region's Lambda concurrency.
   */
  senderConcurrency: number;
  deadLetterConcurrency: number;
  inboundConcurrency: number;
  /** The web console (CloudFront + S3): its OpenID client and where it signs in. */
  console: ConsoleSettings;
  /** The SMTP submission host on ECS Fargate behind an NLB (docs/smtp.md, "On AWS"); off by default. */
  smtpSubmission: SmtpSubmissionSettings | undefined;
}

export interface SmtpSubmissionSettings {
  /**
   * Secrets Manager secret holding `{"cert","key"}` PEM for STARTTLS and implicit TLS: its name, or
   * its complete ARN (with the six-character suffix Secrets Manager adds).
   */
  certificateSecret: string;
  /** Most tasks autoscaling may run (at least one always runs). */
  maxTasks: number;
}

/**
 * Why a Secrets Manager reference is unusable, or undefined: a name of Secrets Manager's characters,
 * or a complete ARN. A partial ARN (no suffix) is refused: ECS reads JSON keys only through the
 * complete one, and a name is resolved to it at deploy time.
 */
export function secretReferenceProblem(reference: string): string | undefined {
  if (reference.startsWith('arn:')) {
    if (/^arn:aws[\w-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[\w/+=.@-]+-[A-Za-z0-9]{6}$/.test(reference))
      return undefined;
    return `must be a secret name or its complete ARN (ending in the six-character suffix, as the console shows it), got "${reference}"`;
  }
  if (/^[\w/+=.@-]{1,512}$/.test(reference)) return undefined;
  return `must be a secret name (letters, digits and /_+=.@-) or its complete ARN, got "${reference}"`;
}

export interface ConsoleSettings {
  /** The console's OpenID client id at the issuer (a public client: authorization code + PKCE). */
  clientId: string;
  /** The issuer the console signs in with; authIssuer unless set. */
  issuer: string;
  /** Resource indicator sent with the sign-in (RFC 8707), for providers that need one. */
  resource: string | undefined;
  /**
   * Origins besides the issuer's that the console's CSP lets it call: a provider whose token
   * endpoint lives elsewhere (Amazon Cognito's hosted domain) is listed here.
   */
  identityOrigins: string[];
  /** A custom domain for the console (with an ACM certificate in us-east-1), else CloudFront's. */
  domainName: string | undefined;
  certificateArn: string | undefined;
}

export class ConfigError extends Error {
  constructor(problems: string[]) {
    super(
      `Invalid deployment configuration (cdk.json "context" or -c name=value):\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
    this.name = 'ConfigError';
  }
}

/** CloudWatch Logs accepts only these retention periods. */
export const logRetentionChoices = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

type ContextReader = (key: string) => unknown;

/** Reads and validates every setting; collects all problems before failing. */
export function readConfig(context: ContextReader): ServiceConfig {
  const problems: string[] = [];

  const text = (key: string, fallback?: string): string | undefined => {
    const raw = context(key);
    if (raw === undefined || raw === null) return fallback;
    if (typeof raw !== 'string' && typeof raw !== 'number') {
      problems.push(`${key} must be a string, got ${JSON.stringify(raw)}`);
      return fallback;
    }
    const value = String(raw).trim();
    return value === '' ? fallback : value;
  };
  const required = (key: string): string => {
    const value = text(key);
    if (value === undefined) problems.push(`${key} is required`);
    return value ?? '';
  };
  const list = (key: string): string[] => {
    const raw = context(key);
    if (raw === undefined || raw === null) return [];
    const items = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : undefined;
    if (items === undefined) {
      problems.push(`${key} must be a list or a comma-separated string`);
      return [];
    }
    return items.map((item) => String(item).trim()).filter((item) => item.length > 0);
  };
  const number = (key: string, fallback: number, { min, integer }: { min: number; integer?: boolean }) => {
    const raw = context(key);
    if (raw === undefined || raw === null || raw === '') return fallback;
    const value = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw) : Number.NaN;
    if (!Number.isFinite(value) || value < min || (integer === true && !Number.isInteger(value))) {
      problems.push(
        `${key} must be ${integer ? 'an integer' : 'a number'} >= ${min}, got ${JSON.stringify(raw)}`,
      );
      return fallback;
    }
    return value;
  };
  const flag = (key: string, fallback: boolean): boolean => {
    const raw = context(key);
    if (raw === undefined || raw === null || raw === '') return fallback;
    if (raw === true || raw === 'true') return true;
    if (raw === false || raw === 'false') return false;
    problems.push(`${key} must be true or false, got ${JSON.stringify(raw)}`);
    return fallback;
  };
  const url = (key: string, value: string, { https }: { https: boolean }): void => {
    if (value === '') return;
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      problems.push(`${key} must be an absolute URL, got "${value}"`);
      return;
    }
    if (https && parsed.protocol !== 'https:')
      problems.push(`${key} must be an https:// URL, got "${value}"`);
  };

  const authIssuer = required('authIssuer');
  const authAudience = required('authAudience');
  const authJwksUrl = required('authJwksUrl');
  url('authJwksUrl', authJwksUrl, { https: true });
  const authAccountClaim = text('authAccountClaim', 'sub') as string;
  const authRequiredTyp = text('authRequiredTyp');
  const authRequiredTokenUse = text('authRequiredTokenUse');

  const serverTimeZone = text('serverTimeZone', 'UTC') as string;
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: serverTimeZone });
  } catch {
    problems.push(
      `serverTimeZone must be an IANA time zone such as "Europe/Berlin", got "${serverTimeZone}"`,
    );
  }

  const blockedCidrs = list('blockedCidrs');
  for (const cidr of blockedCidrs) {
    if (cidrVersion(cidr) === undefined) {
      problems.push(
        `blockedCidrs: "${cidr}" is not an IPv4 or IPv6 network in CIDR notation (e.g. 203.0.113.0/24)`,
      );
    }
  }

  const rateLimitRps = number('rateLimitRps', 50, { min: 1 });
  const rateLimitBurst = number('rateLimitBurst', 100, { min: 1, integer: true });
  const stageThrottleRps = number('stageThrottleRps', 500, { min: 1 });
  const stageThrottleBurst = number('stageThrottleBurst', 1000, { min: 1, integer: true });

  // Sender ownership on AWS: SES may send only as the identities this stack creates, never `*`.
  const sesIdentities = [...new Set(list('sesIdentity').map((identity) => identity.toLowerCase()))];
  for (const identity of sesIdentities) {
    if (!/^([^\s@*]+@)?[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(identity)) {
      problems.push(
        `sesIdentity: "${identity}" must be a domain or an e-mail address (no wildcards: SES may send only as identities the stack manages)`,
      );
    }
  }
  const sesRegion = text('sesRegion');
  if (sesRegion !== undefined && !/^[a-z]{2}(-gov)?-[a-z]+-\d$/.test(sesRegion)) {
    problems.push(`sesRegion must be an AWS region such as "eu-west-1", got "${sesRegion}"`);
  }
  const mailTransport = text('mailTransport', 'ses') as string;
  if (mailTransport !== 'ses' && mailTransport !== 'smtp') {
    problems.push(`mailTransport must be "ses" or "smtp", got "${mailTransport}"`);
  }
  if (mailTransport === 'ses' && sesIdentities.length === 0) {
    problems.push(
      'sesIdentity is required when mailTransport is "ses": the sending domains (comma-separated) the stack creates as SES identities',
    );
  }
  const mailFromSubdomain = (text('mailFromSubdomain', 'bounce') as string).toLowerCase();
  if (!mailFromSubdomain.split('.').every((label) => /^(?!-)[a-z0-9-]{1,63}(?<!-)$/.test(label))) {
    problems.push(`mailFromSubdomain must be DNS labels such as "bounce", got "${mailFromSubdomain}"`);
  }
  const smtpUrl = text('smtpUrl');
  const smtpSecretArn = text('smtpSecretArn');
  if (
    smtpSecretArn !== undefined &&
    !/^arn:aws[\w-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$/.test(smtpSecretArn)
  ) {
    problems.push(`smtpSecretArn must be a Secrets Manager secret ARN, got "${smtpSecretArn}"`);
  }
  if (smtpUrl !== undefined && /^smtps?:\/\/[^/@]*:[^/@]*@/.test(smtpUrl)) {
    problems.push('smtpUrl must not carry credentials: put them in a Secrets Manager secret (smtpSecretArn)');
  }
  if (mailTransport === 'smtp') {
    if (smtpUrl === undefined) problems.push('smtpUrl is required when mailTransport is "smtp"');
    else if (!/^smtps?:\/\//.test(smtpUrl))
      problems.push(`smtpUrl must start with smtp:// or smtps://, got "${smtpUrl}"`);
  }

  // Message objects must outlive the latest moment a held or scheduled message may still be sent.
  const retentionDays = number('retentionDays', 35, { min: 1, integer: true });
  if (retentionDays < minRetentionDays) {
    problems.push(
      `retentionDays must be at least ${minRetentionDays} (the ${schedulingHorizonDays}-day scheduling and manual-wait horizon plus ${retentionMarginDays} days for sending), got ${retentionDays}`,
    );
  }
  const receiving = flag('receiving', false);
  const listedReceivingDomains = context('receivingDomains');
  if (listedReceivingDomains !== undefined && listedReceivingDomains !== null) {
    problems.push(
      'receivingDomains is no longer read: receiving follows the table. Set receiving=true once; the receipt rule then takes mail for every domain SES verified in the account and region, and a domain receives when its receiving is on (POST /domain/update-1.0, or npm run admin -- domains receiving <domain> on), with no redeploy (docs/inbound.md)',
    );
  }
  const logRetentionDays = number('logRetentionDays', 30, { min: 1, integer: true });
  if (!(logRetentionChoices as readonly number[]).includes(logRetentionDays)) {
    problems.push(
      `logRetentionDays must be one of ${logRetentionChoices.join(', ')}, got ${logRetentionDays}`,
    );
  }

  const corsOrigins = list('corsOrigins');
  for (const origin of corsOrigins) {
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin)) {
      problems.push(
        `corsOrigins: "${origin}" must be "*" or an origin such as https://app.example.com (no path)`,
      );
    }
  }

  const gravatarBaseUrl = text('gravatarBaseUrl', 'https://gravatar.com/avatar') as string;
  url('gravatarBaseUrl', gravatarBaseUrl, { https: true });
  const avatarTtlSeconds = number('avatarTtlSeconds', 86_400, { min: 60, integer: true });
  const unsubscribeBaseUrl = text('unsubscribeBaseUrl');
  if (unsubscribeBaseUrl !== undefined) url('unsubscribeBaseUrl', unsubscribeBaseUrl, { https: true });

  const alarmEmail = text('alarmEmail');
  if (alarmEmail !== undefined && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(alarmEmail)) {
    problems.push(`alarmEmail must be an e-mail address, got "${alarmEmail}"`);
  }

  const sesAccountSuppression = flag('sesAccountSuppression', false);
  // Lambda's event source mapping accepts 2 to 1,000.
  const webhookConcurrency = number('webhookConcurrency', 10, { min: 2, integer: true });
  if (webhookConcurrency > 1000)
    problems.push(`webhookConcurrency must be at most 1000, got ${webhookConcurrency}`);
  // Reserved concurrency: taken from the account's unreserved pool, which keeps at least 100.
  const untrustedInputConcurrency = number('untrustedInputConcurrency', 10, { min: 1, integer: true });
  if (untrustedInputConcurrency > 1000)
    problems.push(`untrustedInputConcurrency must be at most 1000, got ${untrustedInputConcurrency}`);
  const consumerConcurrency = (key: string, fallback: number): number => {
    const value = number(key, fallback, { min: 2, integer: true });
    if (value > 1000) problems.push(`${key} must be at most 1000, got ${value}`);
    return value;
  };
  const senderConcurrency = consumerConcurrency('senderConcurrency', queueDefinition.maxConcurrency);
  const deadLetterConcurrency = consumerConcurrency('deadLetterConcurrency', 2);
  const inboundConcurrency = consumerConcurrency('inboundConcurrency', 2);
  const consoleIssuer = text('consoleIssuer', authIssuer) as string;
  url('consoleIssuer', consoleIssuer, { https: true });
  const consoleClientId = text('consoleClientId', 'svc-mail-console') as string;
  const consoleResource = text('consoleResource');
  if (consoleResource !== undefined) url('consoleResource', consoleResource, { https: false });
  const identityOrigins = list('consoleIdentityOrigins');
  for (const origin of identityOrigins) {
    if (!/^https:\/\/[^/\s]+$/.test(origin))
      problems.push(
        `consoleIdentityOrigins: "${origin}" must be an https origin such as https://auth.example.com (no path)`,
      );
  }
  const consoleDomainName = text('consoleDomainName')?.toLowerCase();
  const consoleCertificateArn = text('consoleCertificateArn');
  if (consoleDomainName !== undefined && !/^([a-z0-9-]+\.)+[a-z0-9-]+$/.test(consoleDomainName)) {
    problems.push(
      `consoleDomainName must be a host name such as console.example.com, got "${consoleDomainName}"`,
    );
  }
  if ((consoleDomainName === undefined) !== (consoleCertificateArn === undefined)) {
    problems.push(
      'consoleDomainName and consoleCertificateArn go together: a custom domain needs its certificate',
    );
  }
  if (
    consoleCertificateArn !== undefined &&
    !/^arn:aws[\w-]*:acm:us-east-1:\d{12}:certificate\/[\w-]+$/.test(consoleCertificateArn)
  ) {
    problems.push(
      `consoleCertificateArn must be an ACM certificate in us-east-1 (CloudFront's region), got "${consoleCertificateArn}"`,
    );
  }

  const smtpSubmissionOn = flag('smtpSubmission', false);
  const smtpSubmissionCertificateSecret = text('smtpSubmissionCertificateSecret');
  const smtpSubmissionMaxTasks = number('smtpSubmissionMaxTasks', 4, { min: 1, integer: true });
  if (smtpSubmissionOn && smtpSubmissionCertificateSecret === undefined)
    problems.push('smtpSubmissionCertificateSecret is required when smtpSubmission is true');
  if (smtpSubmissionCertificateSecret !== undefined) {
    const problem = secretReferenceProblem(smtpSubmissionCertificateSecret);
    if (problem !== undefined) problems.push(`smtpSubmissionCertificateSecret ${problem}`);
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    smtpSubmission:
      smtpSubmissionOn && smtpSubmissionCertificateSecret !== undefined
        ? { certificateSecret: smtpSubmissionCertificateSecret, maxTasks: smtpSubmissionMaxTasks }
        : undefined,
    authIssuer,
    authAudience,
    authJwksUrl,
    authAccountClaim,
    authRequiredTyp,
    authRequiredTokenUse,
    serverTimeZone,
    blockedCidrs: [...new Set(blockedCidrs)],
    rateLimitRps,
    rateLimitBurst,
    stageThrottleRps,
    stageThrottleBurst,
    sesIdentities,
    sesRegion,
    mailTransport: mailTransport as MailTransport,
    mailFromSubdomain,
    smtpUrl,
    smtpSecretArn,
    retentionDays,
    receiving,
    logRetentionDays,
    // Unique: the OPTIONS mock may set the allow-origin override only once per request.
    corsOrigins: corsOrigins.length > 0 ? [...new Set(corsOrigins)] : ['*'],
    gravatarBaseUrl,
    avatarTtlSeconds,
    unsubscribeBaseUrl: unsubscribeBaseUrl?.replace(/\/+$/, ''),
    alarmEmail,
    sesAccountSuppression,
    webhookConcurrency,
    untrustedInputConcurrency,
    senderConcurrency,
    deadLetterConcurrency,
    inboundConcurrency,
    console: {
      clientId: consoleClientId,
      issuer: consoleIssuer,
      resource: consoleResource,
      identityOrigins: [...new Set(identityOrigins)],
      domainName: consoleDomainName,
      certificateArn: consoleCertificateArn,
    },
  };
}

/** 4 or 6 for a valid CIDR, undefined otherwise. */
export function cidrVersion(cidr: string): 4 | 6 | undefined {
  const [address, prefix, ...rest] = cidr.split('/');
  if (address === undefined || prefix === undefined || rest.length > 0 || !/^\d{1,3}$/.test(prefix))
    return undefined;
  const bits = Number(prefix);
  const octets = address.split('.');
  if (octets.length === 4) {
    const valid = octets.every((octet) => /^\d{1,3}$/.test(octet) && Number(octet) <= 255);
    return valid && bits <= 32 ? 4 : undefined;
  }
  if (address.includes(':') && !address.includes(':::') && /^[0-9a-f:]+$/i.test(address) && bits <= 128) {
    const doubleColons = address.split('::').length - 1;
    const groups = address.split(':').filter((group) => group !== '');
    const validGroups = groups.every((group) => /^[0-9a-f]{1,4}$/i.test(group));
    if (doubleColons <= 1 && validGroups && (doubleColons === 1 ? groups.length < 8 : groups.length === 8))
      return 6;
  }
  return undefined;
}
