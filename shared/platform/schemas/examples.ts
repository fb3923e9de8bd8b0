/**
 * Values the OpenAPI examples share (route details in each wing, webhook event examples), so the
 * same message, time and ids appear across the document.
 */
export const uuid = '0193a1f2-7c4e-7b1a-9d2e-5f6a7b8c9d0e';
export const otherUuid = '0193a1f2-7c4e-7b1a-9d2e-5f6a7b8c9d0f';
export const at = '2026-11-22T09:15:00.000+01:00';
export const webhookExampleId = 'wh_5f0c6a1e2b3d4c5e6f708192';
export const eventExampleId = 'evt_0f1e2d3c4b5a69788796a5b4c3d2e1f0';
export const inboundExampleId = '5d0f3c2a-9b1e-8c4d-a2f0-6e7d8c9b0a1f';
