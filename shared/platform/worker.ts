import type { AccessNeeds } from './access.ts';

/**
 * A function that no HTTP route invokes, declared in its wing's workers.ts with what triggers it,
 * what it may touch and what a user loses when it stops. The stack (event sources, schedules, IAM,
 * alarms) and the local host (its event-source loops and timers) derive from the declarations.
 */
export interface Worker {
  /** Also the function's folder: functions/<id>/handler.ts. */
  readonly id: string;
  readonly trigger:
    | 'send-queue'
    | 'dead-letter-queue'
    | 'schedule'
    | 'ses-events'
    | 'table-stream'
    | 'table-stream-counting'
    | 'webhook-queue'
    | 'inbound-queue';
  /** For schedules: minutes between runs. */
  readonly everyMinutes?: number;
  readonly summary: string;
  /** What a user loses when it stops working (the alarm's description). */
  readonly impact: string;
  readonly access: AccessNeeds;
}
