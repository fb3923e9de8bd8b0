/** The tracking wing's public module (docs/tracking.md). */
export { trackedHtml } from './compose.ts';
export { hitCounters, hitEventOf } from './model/hit-events.ts';
export {
  effectiveTracking,
  isTracked,
  type TrackingSettings,
} from './model/settings.ts';
export { hitItemOf } from './store/hits.ts';
