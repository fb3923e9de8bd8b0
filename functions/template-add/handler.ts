import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { templateAdd } from '#shared/templates/routes.ts';
import { type TemplateAddRequest, templateAddRequest } from '#shared/templates/schemas.ts';
import { addTemplate } from '#shared/templates/templates.ts';

/** POST /template/add-1.0: a new template with its first version, a draft (dry run: checked, nothing stored). */
export const handler = protectedHandler<TemplateAddRequest>(
  templateAdd,
  { input: { schema: templateAddRequest, from: 'body' } },
  async ({ input, caller, dryRun }) => dataResponse(await addTemplate(input, caller.account, dryRun)),
);
