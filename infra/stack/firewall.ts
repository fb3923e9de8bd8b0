import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { requestLimits, tooLargeDetail } from '../../shared/platform/http/limits.ts';
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
 * more strictly), never split one. For an API key (`svc_live_<key_id>_<secret>`) the key is thus
 * its key id with its secret: key ids are lower case already, so two keys never share a budget;
 * only during a rotation's grace period do a key's old and new secret count apart.
 */
export const tokenKeyTransformations: wafv2.CfnWebACL.TextTransformationProperty[] = [
  { priority: 0, type: 'LOWERCASE' },
  { priority: 1, type: 'COMPRESS_WHITE_SPACE' },
];

/**
 * A regular expression (anchored, digits only: what WAF's regex match takes) for the decimal
 * integers above `limit`: a longer number, or one of the same length that is greater at its first
 * differing digit. WAF cannot compare numbers, so the body limit is a pattern on `Content-Length`.
 */
export function integersAbove(limit: number): string {
  const digits = String(limit);
  const greater = [...digits].flatMap((digit, index) => {
    const next = Number(digit) + 1;
    if (next > 9) return [];
    const rest = digits.length - index - 1;
    const range = next === 9 ? '9' : `[${next}-9]`;
    return [`${digits.slice(0, index)}${range}${rest > 0 ? `[0-9]{${rest}}` : ''}`];
  });
  return `^0*(${[`[1-9][0-9]{${digits.length},}`, ...greater].join('|')})$`;
}

/** WAF's evaluation window for the rate rules, and its smallest allowed limit. */
export const rateWindowSeconds = 60;
const minimumRateLimit = 10;

/**
 * AWS WAF in front of the stage, answering in the service's envelope:
 * 1. callers from a blocked network → 401, code 103 (IPv4 and IPv6 sets from `blockedCidrs`);
 * 2. more than `rateLimitRps` × 60 requests a minute with the same Authorization header (normalised:
 *    case and blanks folded, see `tokenKeyTransformations`) → 429, code 115;
 * 3. the same for every request of one source address, token or not (random tokens cannot sidestep it);
 * 4. a `Content-Length` over the body limit → 406, code 107 naming the limit, as the local gateway
 *    answers. Without it such a body would reach Lambda, whose 6 MiB invocation payload holds the
 *    whole event (the body as a JSON string, headers, request context), and fail as a 5xx.
 * WAF counts across every function instance; the functions' own token bucket only sees one instance.
 * WAF counts requests, not messages: a batch's messages are counted per account across instances
 * by the message budget in the table (shared/platform/rate-limit/message-budget-store.ts).
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
      // WAFv2 allows letters, digits, whitespace and + = : # @ / - , . only (no parentheses).
      description: 'Network rule 103, per-caller rate limit 115 and body limit 107 of the e-mail API',
      visibilityConfig: visibility('svc-mail-web-acl'),
      customResponseBodies: {
        'ip-blocked': { contentType: 'APPLICATION_JSON', content: envelope(103) },
        'too-many-requests': { contentType: 'APPLICATION_JSON', content: envelope(115) },
        'body-too-large': {
          contentType: 'APPLICATION_JSON',
          content: envelope(107, undefined, [tooLargeDetail]),
        },
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
        {
          // After the rate rules, so an oversized request still counts for its caller.
          name: 'body-too-large',
          priority: 3,
          statement: {
            regexMatchStatement: {
              regexString: integersAbove(requestLimits.maxBodyBytes),
              fieldToMatch: { singleHeader: { Name: 'content-length' } },
              textTransformations: [{ priority: 0, type: 'NONE' }],
            },
          },
          action: blockWith(406, 'body-too-large', 'body-too-large'),
          visibilityConfig: visibility('svc-mail-body-too-large'),
        },
      ],
    });

    new wafv2.CfnWebACLAssociation(this, 'StageAssociation', {
      resourceArn: props.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
  }
}
