export { inboundRetentionDays } from './config.ts';
export { inboundExampleSummary } from './examples.ts';
export { type InboundItem, inboundSummaryView } from './model/inbound.ts';
export { inboundSummary } from './schemas.ts';
export { inboundItemOf } from './store/inbound.ts';
export { putSesMessageId } from './store/ses-message-ids.ts';
