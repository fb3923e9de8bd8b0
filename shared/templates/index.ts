export { messageTemplate, messageTemplateRecord } from './message-template-schema.ts';
export type { TemplateHead } from './model/template.ts';
export { getTemplateHeadAndDomain } from './store/templates.ts';
export type { RenderedMessage } from './templates.ts';
