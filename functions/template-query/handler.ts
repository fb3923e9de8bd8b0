import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { templateQuery } from '#shared/templates/routes.ts';
import { type TemplateQueryRequest, templateQueryRequest } from '#shared/templates/schemas.ts';
import { queryTemplates } from '#shared/templates/templates.ts';

/** POST /template/query-1.0: one template with a version in full, or a page of the account's templates. */
export const handler = protectedHandler<TemplateQueryRequest>(
  templateQuery,
  { input: { schema: templateQueryRequest, from: 'body' } },
  async ({ input, caller }) => dataResponse(await queryTemplates(input, caller.account)),
);
