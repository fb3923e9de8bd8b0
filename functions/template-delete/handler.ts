import { dataResponse } from '#shared/http/envelope.ts';
import { protectedHandler } from '#shared/http/protected-handler.ts';
import { type TemplateDeleteRequest, templateDeleteRequest } from '#shared/schemas/templates.ts';
import { deleteTemplate } from '#shared/services/templates.ts';

/** POST /template/delete-1.0: deletes a template with every version, unless another one uses it as its layout. */
export const handler = protectedHandler<TemplateDeleteRequest>(
  'template-delete',
  { input: { schema: templateDeleteRequest, from: 'body' } },
  async ({ input, caller, dryRun }) => dataResponse(await deleteTemplate(input, caller.account, dryRun)),
);
