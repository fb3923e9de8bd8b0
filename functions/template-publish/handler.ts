import { dataResponse } from '#shared/http/envelope.ts';
import { protectedHandler } from '#shared/http/protected-handler.ts';
import { type TemplatePublishRequest, templatePublishRequest } from '#shared/schemas/templates.ts';
import { publishTemplate } from '#shared/services/templates.ts';

/** POST /template/publish-1.0: makes a version the live one; an older one is the rollback. */
export const handler = protectedHandler<TemplatePublishRequest>(
  'template-publish',
  { input: { schema: templatePublishRequest, from: 'body' } },
  async ({ input, caller, dryRun }) => dataResponse(await publishTemplate(input, caller.account, dryRun)),
);
