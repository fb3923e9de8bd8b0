import { dataResponse } from '#shared/http/envelope.ts';
import { protectedHandler } from '#shared/http/protected-handler.ts';
import { type TemplateRenderRequest, templateRenderRequest } from '#shared/schemas/templates.ts';
import { renderPreview } from '#shared/services/templates.ts';

/** POST /template/render-1.0: the editor's preview; template problems are answered in `errors`, not thrown. */
export const handler = protectedHandler<TemplateRenderRequest>(
  'template-render',
  { input: { schema: templateRenderRequest, from: 'body' } },
  async ({ input, caller }) => dataResponse(await renderPreview(input, caller.account)),
);
