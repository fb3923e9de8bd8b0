import type { paths } from '../../clients/openapi.ts';
import { messageStatuses as serviceStatuses } from '../../shared/messages/model/statuses.ts';

/**
 * The API's shapes the pages use, taken from the generated OpenAPI types (clients/openapi.ts), and
 * the lists of enum values a form offers, checked against those types: a value the API adds or
 * drops fails the console's typecheck until the list follows.
 */
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type Body<P extends keyof paths> = Json<
  NonNullable<paths[P]['post'] extends { requestBody?: infer R } ? R : never>
>;
type Data<P extends keyof paths, M extends 'get' | 'post' = 'post'> =
  NonNullable<paths[P][M]> extends {
    responses: { 200: infer R };
  }
    ? Json<R> extends { data: infer D }
      ? D
      : never
    : never;

export type MessageQueryBody = Body<'/message/query-1.0'>;
export type MessageFilters = NonNullable<MessageQueryBody['filters']>;
type MessageQueryData = Data<'/message/query-1.0'>;
export type MessagePage = Extract<MessageQueryData, { messages: unknown }>;
export type MessageSummary = MessagePage['messages'][number];
export type MessageDetails = Exclude<MessageQueryData, { messages: unknown }>;
export type MessageStatus = MessageSummary['status'];

export type RecipientEvent = MessageDetails['recipients'][number]['events'][number];
export type MessageContent = Data<'/message/content-1.0'>;

export type StatsQueryBody = Body<'/stats/query-1.0'>;
export type Stats = Data<'/stats/query-1.0'>;
export type StatsSeries = Stats['series'][number];
export type StatsPoint = StatsSeries['points'][number];

export type DkimStatus = Data<'/domain/dkim/status-1.0', 'get'>;
export type DkimKey = DkimStatus['dkim_keys'][number];
export type DkimAlgorithm = DkimKey['algorithm'];
export type DomainView = Data<'/domain/add-1.0'>['domain'];
export type DomainRecordView = DomainView['records'][number];
type DomainQueryData = Data<'/domain/query-1.0'>;
export type DomainPage = Extract<DomainQueryData, { domains: unknown }>;

type SuppressionQueryData = Data<'/suppression/query-1.0'>;
export type SuppressionPage = Extract<SuppressionQueryData, { suppressions: unknown }>;
export type SuppressionEntry = SuppressionPage['suppressions'][number];
export type SuppressionReason = SuppressionEntry['reason'];
export type SuppressionStream = SuppressionEntry['stream'];

type WebhookQueryData = Data<'/webhook/query-1.0'>;
export type WebhookList = Extract<WebhookQueryData, { webhooks: unknown }>;
export type WebhookView = WebhookList['webhooks'][number];
export type WebhookDetail = Extract<WebhookQueryData, { webhook: unknown }>['webhook'];
export type DeliveryAttempt = WebhookDetail['deliveries'][number];
export type WebhookEventType = WebhookView['events'][number];
export type WebhookWithSecret = Data<'/webhook/add-1.0'>['webhook'];

export type IssuedApiKey = Data<'/apikey/add-1.0'>;
export type ApiKeyView = IssuedApiKey['api_key'];
export type ApiKeyList = Extract<Data<'/apikey/query-1.0'>, { api_keys: unknown }>;

type TemplateQueryData = Data<'/template/query-1.0'>;
export type TemplateList = Extract<TemplateQueryData, { templates: unknown }>;
export type TemplateSummary = TemplateList['templates'][number];
export type TemplateDetail = Exclude<TemplateQueryData, { templates: unknown }>;
export type TemplateVersion = TemplateDetail['version'];
export type TemplateRender = Data<'/template/render-1.0'>;
export type TemplateRenderError = TemplateRender['errors'][number];

/** Every member of a union, once: `exhaustive<U>()([...])` fails to compile when one is missing. */
const exhaustive =
  <U extends string>() =>
  <L extends readonly U[]>(list: L & ([Exclude<U, L[number]>] extends [never] ? unknown : never)) =>
    list;

/** The service's own list (pure data, shared with the functions), checked against the API's type. */
export const messageStatuses = exhaustive<MessageStatus>()(serviceStatuses);

export const dkimAlgorithms = exhaustive<DkimAlgorithm>()(['rsa-sha256', 'ed25519-sha256'] as const);

export const suppressionReasons = exhaustive<SuppressionReason>()([
  'hard_bounce',
  'complaint',
  'manual',
  'unsubscribed',
] as const);

export const suppressionStreams = exhaustive<SuppressionStream>()(['all', 'broadcast'] as const);

/** How the Suppressions page names each stream an entry stops. */
export const suppressionStreamLabels: Record<SuppressionStream, string> = {
  all: 'every stream',
  broadcast: 'broadcast only',
};

export const webhookEventTypes = exhaustive<WebhookEventType>()([
  'message.sent',
  'message.delivered',
  'message.bounced',
  'message.complained',
  'message.delayed',
  'message.failed',
  'message.suppressed',
  'message.cancelled',
  'recipient.unsubscribed',
  'message.opened',
  'message.clicked',
  'inbound.received',
  'webhook.disabled',
  'key.created',
  'key.rotated',
  'key.revoked',
  'domain.verified',
  'domain.temporary_failure',
  'domain.failed',
  'domain.claimed',
] as const);
