import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { messageUuidTag } from '../../messages/index.ts';
import { observeClient } from '../../platform/aws/client-observer.ts';
import { envString } from '../../platform/config/env.ts';
import type { MailTransport, OutgoingMail, TransportResult } from './transport.ts';
import { rewrittenHeadersOf, TransportError } from './transport.ts';

/**
 * Amazon SES v2 SendEmail with raw content. The configuration set (SES_CONFIGURATION_SET) publishes
 * delivery events to EventBridge, which invokes the delivery-events function; the message uuid
 * rides along as a message tag because SES replaces the Message-ID header, and the message's own
 * tags after it (they follow SES's rule for tags, and the name `message_uuid` is reserved).
 */
const permanentErrors = new Set([
  'MessageRejected',
  'BadRequestException',
  'MailFromDomainNotVerifiedException',
]);

export function createSesTransport(): MailTransport {
  const client = observeClient(new SESv2Client({ maxAttempts: 3 }));
  const configurationSet = envString('SES_CONFIGURATION_SET');
  return {
    name: 'ses',
    rewrittenHeaders: rewrittenHeadersOf.ses,
    async send(mail: OutgoingMail): Promise<TransportResult> {
      try {
        const result = await client.send(
          new SendEmailCommand({
            FromEmailAddress: mail.sender ?? mail.envelope.from,
            Destination: { ToAddresses: mail.envelope.to },
            Content: { Raw: { Data: mail.raw } },
            ...(configurationSet === undefined ? {} : { ConfigurationSetName: configurationSet }),
            EmailTags: [
              { Name: messageUuidTag, Value: mail.messageUuid },
              ...(mail.tags ?? []).map((tag) => ({ Name: tag.name, Value: tag.value })),
            ],
          }),
        );
        return {
          messageId: result.MessageId,
          response: `SES accepted the message (${result.MessageId ?? 'no id'})`,
          recipients: mail.envelope.to.map((email) => ({
            email,
            outcome: 'accepted' as const,
            permanent: true,
          })),
          finalHop: false,
        };
      } catch (error) {
        const name = (error as { name?: string }).name ?? 'Error';
        const message = (error as Error).message?.slice(0, 300) ?? '';
        throw new TransportError(
          `SES refused the message: ${name} ${message}`.trim(),
          permanentErrors.has(name),
          {
            cause: error,
          },
        );
      }
    },
  };
}
