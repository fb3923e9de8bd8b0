import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { ConfigError, cidrVersion, readConfig } from '../../infra/config.ts';
import { assertEntriesExist, MissingEntryError } from '../../infra/stack/service-function.ts';
import { cdkJsonContext } from '../support/infra.ts';

const base = cdkJsonContext();
const configWith = (overrides: Record<string, unknown>) => {
  const context: Record<string, unknown> = { ...base, ...overrides };
  return readConfig((key) => context[key]);
};
const problemsOf = (overrides: Record<string, unknown>): string => {
  try {
    configWith(overrides);
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.message;
  }
  assert.fail('expected a configuration error');
};

describe('deployment configuration (context)', () => {
  it('accepts the cdk.json example values as they are', () => {
    const config = configWith({});
    assert.equal(config.authAccountClaim, 'sub');
    assert.equal(config.mailTransport, 'ses');
    assert.deepEqual(config.corsOrigins, ['*']);
    assert.deepEqual(config.blockedCidrs, []);
  });

  it('reads -c strings: numbers, comma-separated lists', () => {
    const config = configWith({
      rateLimitRps: '20',
      blockedCidrs: '198.51.100.0/24, 2001:db8::/48',
      corsOrigins: 'https://a.example',
    });
    assert.equal(config.rateLimitRps, 20);
    assert.deepEqual(config.blockedCidrs, ['198.51.100.0/24', '2001:db8::/48']);
    assert.deepEqual(config.corsOrigins, ['https://a.example']);
  });

  it('drops duplicate origins and networks', () => {
    const config = configWith({
      corsOrigins: ['https://a.example', 'https://a.example'],
      blockedCidrs: '203.0.113.0/24,203.0.113.0/24',
    });
    assert.deepEqual(config.corsOrigins, ['https://a.example']);
    assert.deepEqual(config.blockedCidrs, ['203.0.113.0/24']);
  });

  it('requires an https JWKS URL', () => {
    assert.match(
      problemsOf({ authJwksUrl: 'http://idp.example/jwks.json' }),
      /authJwksUrl must be an https:\/\/ URL/,
    );
    assert.match(problemsOf({ authJwksUrl: 'not a url' }), /authJwksUrl must be an absolute URL/);
  });

  it('names every missing or invalid key at once', () => {
    const message = problemsOf({
      authIssuer: undefined,
      authAudience: '',
      serverTimeZone: 'Mars/Olympus',
      blockedCidrs: ['10.0.0.0/33', 'example.com'],
      rateLimitRps: 'fast',
      logRetentionDays: 42,
      mailTransport: 'pigeon',
      corsOrigins: ['https://app.example/path'],
    });
    for (const expected of [
      /authIssuer is required/,
      /authAudience is required/,
      /serverTimeZone must be an IANA time zone/,
      /blockedCidrs: "10\.0\.0\.0\/33"/,
      /blockedCidrs: "example\.com"/,
      /rateLimitRps must be a number/,
      /logRetentionDays must be one of/,
      /mailTransport must be "ses" or "smtp"/,
      /corsOrigins: "https:\/\/app\.example\/path"/,
    ]) {
      assert.match(message, expected);
    }
  });

  it('needs a relay URL for the smtp transport', () => {
    assert.match(problemsOf({ mailTransport: 'smtp' }), /smtpUrl is required/);
    assert.equal(
      configWith({ mailTransport: 'smtp', smtpUrl: 'smtps://relay.example:465' }).smtpUrl,
      'smtps://relay.example:465',
    );
  });

  it('keeps SES to named identities: no "*", and none at all is an error for the ses transport', () => {
    assert.match(problemsOf({ sesIdentity: '*' }), /sesIdentity: "\*" must be a domain or an e-mail address/);
    assert.match(problemsOf({ sesIdentity: '' }), /sesIdentity is required when mailTransport is "ses"/);
    assert.deepEqual(configWith({ sesIdentity: 'Mail.Example.com, ops@example.org' }).sesIdentities, [
      'mail.example.com',
      'ops@example.org',
    ]);
  });

  it('receiving is one switch; the removed receivingDomains fails with what replaced it', () => {
    assert.equal(configWith({}).receiving, false);
    assert.equal(configWith({ receiving: 'true' }).receiving, true);
    assert.match(problemsOf({ receiving: 'yes' }), /receiving must be true or false/);
    assert.match(
      problemsOf({ receivingDomains: 'inbound.example.com' }),
      /receivingDomains is no longer read: receiving follows the table.*no redeploy/,
    );
  });

  it('SMTP submission: off by default; on, it needs a certificate secret by name or complete ARN', () => {
    assert.equal(configWith({}).smtpSubmission, undefined);
    assert.match(problemsOf({ smtpSubmission: true }), /smtpSubmissionCertificateSecret is required/);
    assert.deepEqual(
      configWith({ smtpSubmission: 'true', smtpSubmissionCertificateSecret: 'svc-mail/submission-tls' })
        .smtpSubmission,
      { certificateSecret: 'svc-mail/submission-tls', maxTasks: 4 },
    );
    const arn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:svc-mail/submission-tls-AbC123';
    assert.equal(
      configWith({ smtpSubmission: true, smtpSubmissionCertificateSecret: arn, smtpSubmissionMaxTasks: '2' })
        .smtpSubmission?.certificateSecret,
      arn,
    );
    assert.match(
      problemsOf({
        smtpSubmission: true,
        smtpSubmissionCertificateSecret:
          'arn:aws:secretsmanager:us-east-1:123456789012:secret:svc-mail/submission-tls',
      }),
      /smtpSubmissionCertificateSecret must be a secret name or its complete ARN \(ending in the six-character suffix/,
    );
    assert.match(
      problemsOf({ smtpSubmission: true, smtpSubmissionCertificateSecret: 'my secret!' }),
      /smtpSubmissionCertificateSecret must be a secret name \(letters, digits and \/_\+=\.@-\) or its complete ARN, got "my secret!"/,
    );
    assert.match(
      problemsOf({
        smtpSubmission: true,
        smtpSubmissionCertificateSecret: 'tls',
        smtpSubmissionMaxTasks: '0',
      }),
      /smtpSubmissionMaxTasks/,
    );
    assert.match(
      problemsOf({
        smtpSubmission: true,
        smtpSubmissionCertificateSecret: 'tls',
        smtpSubmissionMaxTasks: '1.5',
      }),
      /smtpSubmissionMaxTasks/,
    );
    assert.match(problemsOf({ smtpSubmission: 'yes' }), /smtpSubmission must be true or false/);
  });

  it('keeps relay credentials out of smtpUrl: they come from a Secrets Manager secret', () => {
    assert.match(
      problemsOf({ mailTransport: 'smtp', smtpUrl: 'smtp://user:pw@relay.example:587' }),
      /smtpUrl must not carry credentials/,
    );
    assert.match(
      problemsOf({ smtpSecretArn: 'my-secret' }),
      /smtpSecretArn must be a Secrets Manager secret ARN/,
    );
  });

  it('refuses a retentionDays that would expire objects of messages still allowed to be sent', () => {
    assert.match(problemsOf({ retentionDays: 30 }), /retentionDays must be at least 32/);
    assert.equal(configWith({ retentionDays: 32 }).retentionDays, 32);
    assert.equal(configWith({ retentionDays: undefined }).retentionDays, 35);
  });

  it('tells IPv4 from IPv6 networks and rejects malformed ones', () => {
    assert.equal(cidrVersion('203.0.113.0/24'), 4);
    assert.equal(cidrVersion('2001:db8::/32'), 6);
    assert.equal(cidrVersion('2001:db8:0:0:0:0:0:1/128'), 6);
    assert.equal(cidrVersion('203.0.113.0'), undefined);
    assert.equal(cidrVersion('256.0.0.0/8'), undefined);
    assert.equal(cidrVersion('2001:db8:::1/64'), undefined);
  });
});

describe('function entries', () => {
  it('fails with one message that names every missing entry and its path', () => {
    const root = mkdtempSync(join(tmpdir(), 'svc-mail-entries-'));
    try {
      mkdirSync(join(root, 'functions', 'present'), { recursive: true });
      writeFileSync(join(root, 'functions', 'present', 'handler.ts'), 'export const handler = () => 1;\n');
      assert.throws(
        () => assertEntriesExist(['present', 'message-add', 'sender'], root),
        (error: unknown) => {
          assert.ok(error instanceof MissingEntryError);
          assert.match(error.message, /2 function entries are missing/);
          assert.match(error.message, /message-add: functions\/message-add\/handler\.ts/);
          assert.match(error.message, /sender: functions\/sender\/handler\.ts/);
          assert.doesNotMatch(error.message, /present/);
          return true;
        },
      );
      assert.doesNotThrow(() => assertEntriesExist(['present'], root));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
