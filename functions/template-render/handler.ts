import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { type TemplateRenderRequest, templateRenderRequest } from '#shared/templates/schemas.ts';
import { renderPreview } from '#shared/templates/templates.ts';

/** POST /template/render-1.0: the editor's preview; template problems are answered in `errors`, not thrown. */
export const handler = protectedHandler<TemplateRenderRequest>(
  'template-render',
  { input: { schema: templateRenderRequest, from: 'body' } },
  async ({ input, caller }) => dataResponse(await renderPreview(input, caller.account)),
);
