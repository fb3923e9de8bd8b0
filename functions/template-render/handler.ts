import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { templateRender } from '#shared/templates/routes.ts';
import { type TemplateRenderRequest, templateRenderRequest } from '#shared/templates/schemas.ts';
import { renderPreview } from '#shared/templates/templates.ts';

/** POST /template/render-1.0: the editor's preview; template problems are answered in `errors`, not thrown. */
export const handler = protectedHandler<TemplateRenderRequest>(
  templateRender,
  { input: { schema: templateRenderRequest, from: 'body' } },
  async ({ input, caller }) => dataResponse(await renderPreview(input, caller.account)),
);
