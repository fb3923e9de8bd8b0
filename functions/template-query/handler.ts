import { dataResponse } from '#shared/http/envelope.ts';
import { protectedHandler } from '#shared/http/protected-handler.ts';
import { type TemplateQueryRequest, templateQueryRequest } from '#shared/schemas/templates.ts';
import { queryTemplates } from '#shared/services/templates.ts';

/** POST /template/query-1.0: one template with a version in full, or a page of the account's templates. */
export const handler = protectedHandler<TemplateQueryRequest>(
  'template-query',
  { input: { schema: templateQueryRequest, from: 'body' } },
  async ({ input, caller }) => dataResponse(await queryTemplates(input, caller.account)),
);
