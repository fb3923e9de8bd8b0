import type { FunctionId } from '../../shared/workers.ts';
import type { ServiceConfig } from '../config.ts';

/**
 * The API functions that render or parse untrusted input: template source (checked, rendered,
 * previewed) and composed content (HTML converted to text, MIME taken apart). Each has reserved
 * concurrency from the stack context (`untrustedInputConcurrency`): its own share, which a flood of
 * hostile requests runs out of without taking the concurrency of the sender, the webhooks or the
 * rest of the API (docs/security.md, "Limits"). Received mail, the other untrusted input, is
 * capped on its queue mapping instead (`inboundConcurrency`).
 */
export const untrustedInputFunctions: ReadonlySet<FunctionId> = new Set<FunctionId>([
  'template-render',
  'template-add',
  'template-update',
  'message-content',
]);

export function untrustedInputConcurrencyOf(
  id: FunctionId,
  config: Pick<ServiceConfig, 'untrustedInputConcurrency'>,
): number | undefined {
  return untrustedInputFunctions.has(id) ? config.untrustedInputConcurrency : undefined;
}
