import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { templatePublish } from '#shared/templates/routes.ts';
import { type TemplatePublishRequest, templatePublishRequest } from '#shared/templates/schemas.ts';
import { publishTemplate } from '#shared/templates/templates.ts';

/** POST /template/publish-1.0: makes a version the live one; an older one is the rollback. */
export const handler = protectedHandler<TemplatePublishRequest>(
  templatePublish,
  { input: { schema: templatePublishRequest, from: 'body' } },
  async ({ input, caller, dryRun }) => dataResponse(await publishTemplate(input, caller.account, dryRun)),
);
