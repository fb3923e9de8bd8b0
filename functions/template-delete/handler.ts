import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { templateDelete } from '#shared/templates/routes.ts';
import { type TemplateDeleteRequest, templateDeleteRequest } from '#shared/templates/schemas.ts';
import { deleteTemplate } from '#shared/templates/templates.ts';

/** POST /template/delete-1.0: deletes a template with every version, unless another one uses it as its layout. */
export const handler = protectedHandler<TemplateDeleteRequest>(
  templateDelete,
  { input: { schema: templateDeleteRequest, from: 'body' } },
  async ({ input, caller, dryRun }) => dataResponse(await deleteTemplate(input, caller.account, dryRun)),
);
