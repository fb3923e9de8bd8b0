import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { cidrVersion } from '../config.ts';
import { envelope } from './api.ts';

export interface FirewallProps {
  /** ARN of the API Gateway stage the web ACL protects. */
  readonly stageArn: string;
  readonly blockedCidrs: readonly string[];
  /** Per-caller requests per second, averaged over the one-minute evaluation window. */
  readonly rateLimitRps: number;
}

/**
 * The per-token rule's key is the Authorization header after these transformations, so the spellings
 * a client (or an attacker) can vary without changing the token count as one: the scheme's case
 * (`Bearer`, `bearer`, `BEARER`) and runs of blanks between scheme and token (`Bearer  <jwt>`,
 * a tab; HTTP itself drops leading and trailing blanks of a header value). Lower-casing also folds the token itself, which can only merge two keys (count
 * more strictly), never split one.
 */
export const tokenKeyTransformations: wafv2.CfnWebACL.TextTransformationProperty[] = [
  { priority: 0, type: 'LOWERCASE' },
  { priority: 1, type: 'COMPRESS_WHITE_SPACE' },
];

/** WAF's evaluation window for the rate rules, and its smallest allowed limit. */
export const rateWindowSeconds = 60;
const minimumRateLimit = 10;

/**
 * AWS WAF in front of the stage, answering in the service's envelope:
 * 1. callers from a blocked network → 401, code 103 (IPv4 and IPv6 sets from `blockedCidrs`);
 * 2. more than `rateLimitRps` × 60 requests a minute with the same Authorization header (normalised:
 *    case and blanks folded, see `tokenKeyTransformations`) → 429, code 115;
 * 3. the same for every request of one source address, token or not (random tokens cannot sidestep it).
 * WAF counts across every function instance; the functions' own token bucket only sees one instance.
 * WAF counts requests, not messages: a batch's messages are counted per account across instances
 * by the message budget in the table (shared/repositories/message-budget.ts).
 */
export class Firewall extends Construct {
  readonly webAcl: wafv2.CfnWebACL;
  readonly rateLimitPerWindow: number;

  constructor(scope: Construct, id: string, props: FirewallProps) {
    super(scope, id);
    const v4 = props.blockedCidrs.filter((cidr) => cidrVersion(cidr) === 4);
    const v6 = props.blockedCidrs.filter((cidr) => cidrVersion(cidr) === 6);
    const blockedV4 = new wafv2.CfnIPSet(this, 'BlockedNetworksV4', {
      scope: 'REGIONAL',
      ipAddressVersion: 'IPV4',
      addresses: v4,
      description: 'Networks answered with 401 and code 103, from context blockedCidrs',
    });
    const blockedV6 = new wafv2.CfnIPSet(this, 'BlockedNetworksV6', {
      scope: 'REGIONAL',
      ipAddressVersion: 'IPV6',
      addresses: v6,
      description: 'Networks answered with 401 and code 103, from context blockedCidrs',
    });
    this.rateLimitPerWindow = Math.max(minimumRateLimit, Math.ceil(props.rateLimitRps * rateWindowSeconds));

    const visibility = (metricName: string) => ({
      cloudWatchMetricsEnabled: true,
      sampledRequestsEnabled: true,
      metricName,
    });
    // WAF answers before API Gateway assigns a request id and has no per-request variable for its
    // custom responses, so `x-request-id` names the rule that answered (search WAF's sampled
    // requests or logs by it); every other answer carries API Gateway's request id.
    const blockWith = (status: number, bodyKey: string, rule: string) => ({
      block: {
        customResponse: {
          responseCode: status,
          customResponseBodyKey: bodyKey,
          responseHeaders: [{ name: 'x-request-id', value: `waf-${rule}` }],
        },
      },
    });

    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      description: 'Network rule, code 103, and per-caller rate limit, code 115, for the e-mail API',
      visibilityConfig: visibility('svc-mail-web-acl'),
      customResponseBodies: {
        'ip-blocked': { contentType: 'APPLICATION_JSON', content: envelope(103) },
        'too-many-requests': { contentType: 'APPLICATION_JSON', content: envelope(115) },
      },
      rules: [
        {
          name: 'blocked-networks',
          priority: 0,
          statement: {
            orStatement: {
              statements: [
                { ipSetReferenceStatement: { arn: blockedV4.attrArn } },
                { ipSetReferenceStatement: { arn: blockedV6.attrArn } },
              ],
            },
          },
          action: blockWith(401, 'ip-blocked', 'blocked-networks'),
          visibilityConfig: visibility('svc-mail-blocked-networks'),
        },
        {
          name: 'rate-per-token',
          priority: 1,
          statement: {
            rateBasedStatement: {
              limit: this.rateLimitPerWindow,
              evaluationWindowSec: rateWindowSeconds,
              aggregateKeyType: 'CUSTOM_KEYS',
              customKeys: [
                { header: { name: 'authorization', textTransformations: tokenKeyTransformations } },
              ],
            },
          },
          action: blockWith(429, 'too-many-requests', 'rate-per-token'),
          visibilityConfig: visibility('svc-mail-rate-per-token'),
        },
        {
          // Every request counts per source address, with or without a token: a caller who sends a
          // new random token with each request escapes the per-token rule, never this one.
          name: 'rate-per-address',
          priority: 2,
          statement: {
            rateBasedStatement: {
              limit: this.rateLimitPerWindow,
              evaluationWindowSec: rateWindowSeconds,
              aggregateKeyType: 'IP',
            },
          },
          action: blockWith(429, 'too-many-requests', 'rate-per-address'),
          visibilityConfig: visibility('svc-mail-rate-per-address'),
        },
      ],
    });

    new wafv2.CfnWebACLAssociation(this, 'StageAssociation', {
      resourceArn: props.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
  }
}
