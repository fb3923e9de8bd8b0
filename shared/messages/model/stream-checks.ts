import type { ErrorDetail } from '../../platform/errors/service-error.ts';
import { hasUnsubscribePlaceholder, type MessageStream, unsubscribePlaceholder } from './stream.ts';

type Content =
  | { kind: 'text_only'; text: string }
  | { kind: 'html_only'; html: string }
  | { kind: 'mixed'; text: string; html: string }
  | { kind: 'eml'; eml: string };

/**
 * The stream rules a message is checked against once its recipients and bodies are known (an EML
 * or a template gives them): a broadcast goes to exactly one `to` recipient, an EML broadcast
 * carries the unsubscribe placeholder itself (its MIME parts are sent as written, so no footer can
 * be appended), and transactional mail never asks for an unsubscribe link.
 */
export function streamProblems(message: {
  stream: MessageStream;
  to: readonly unknown[];
  cc: readonly unknown[];
  bcc: readonly unknown[];
  content: Content;
  eml?: Buffer;
  templated: boolean;
}): ErrorDetail[] {
  const { content } = message;
  const bodyField = message.templated ? 'template' : 'content';
  if (message.stream === 'transactional') {
    const asks =
      content.kind === 'eml'
        ? message.eml?.includes(unsubscribePlaceholder) === true
        : hasUnsubscribePlaceholder('text' in content ? content.text : undefined) ||
          hasUnsubscribePlaceholder('html' in content ? content.html : undefined);
    return asks
      ? [
          {
            field: bodyField,
            message: `${unsubscribePlaceholder} is for broadcast messages (stream "broadcast"); transactional mail has no unsubscribe link`,
          },
        ]
      : [];
  }
  const problems: ErrorDetail[] = [];
  if (message.to.length !== 1 || message.cc.length + message.bcc.length > 0) {
    problems.push({
      field: 'to',
      message: 'A broadcast message has exactly one recipient, in to (send a batch for many)',
    });
  }
  if (content.kind === 'eml' && message.eml?.includes(unsubscribePlaceholder) !== true) {
    problems.push({
      field: 'content.eml',
      message: `A broadcast EML must show the unsubscribe link: write ${unsubscribePlaceholder} in its body (its parts are sent as written)`,
    });
  }
  return problems;
}
