import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { templateUpdate } from '#shared/templates/routes.ts';
import { type TemplateUpdateRequest, templateUpdateRequest } from '#shared/templates/schemas.ts';
import { updateTemplate } from '#shared/templates/templates.ts';

/** POST /template/update-1.0: a new draft version built on the latest one, or a rename. */
export const handler = protectedHandler<TemplateUpdateRequest>(
  templateUpdate,
  { input: { schema: templateUpdateRequest, from: 'body' } },
  async ({ input, caller, dryRun }) => dataResponse(await updateTemplate(input, caller.account, dryRun)),
);
