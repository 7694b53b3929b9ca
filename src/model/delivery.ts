/** ERP events waiting in the outbox and the attempts to deliver them. */

/** Delivery states: `failed` = the last attempt failed and another is scheduled; `dead` = retries ran out. */
export const OUTBOX_STATES = ['pending', 'delivered', 'failed', 'dead'] as const;
export type OutboxState = (typeof OUTBOX_STATES)[number];
/** `acknowledged`: an ERP that pulls the feed confirmed it has the event (no push needed). */
export const ATTEMPT_OUTCOMES = ['delivered', 'failed', 'dead', 'rejected_stale_lease', 'acknowledged'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/** What an outbox row carries: an ERP event, or an alert notification to the account's alert receiver. */
export const OUTBOX_LANES = ['erp', 'alert'] as const;
export type OutboxLane = (typeof OUTBOX_LANES)[number];

export interface OutboxEvent {
  seq: number;
  lane: OutboxLane;
  /** The account whose ERP receives it (its `erp.notify_url`, signed with its secret). */
  account: string;
  eventId: string;
  eventType: string;
  /** Events with the same key are delivered strictly one after another, in the order written. */
  orderKey: string;
  orderId: string | null;
  mercantId: string | null;
  statusVersion: number | null;
  /** The exact bytes delivered, identical on every retry. */
  payload: string;
  state: OutboxState;
  attempts: number;
  nextAttemptAt: string;
  leaseOwner: string | null;
  leaseUntil: string | null;
  leaseToken: number;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
  deliveredAt: string | null;
  retryFrom: string;
  /** W3C `traceparent` of the work that wrote the event (null when tracing was off). */
  traceContext: string | null;
}

/** What a caller writes; the rest of an OutboxEvent is the outbox's own bookkeeping. */
export type NewOutboxEvent = Pick<
  OutboxEvent,
  'eventId' | 'eventType' | 'orderKey' | 'orderId' | 'mercantId' | 'statusVersion' | 'payload'
> &
  Partial<Pick<OutboxEvent, 'traceContext'>> & { /** Default `erp`. */ lane?: OutboxLane };

export interface DeliveryAttempt {
  id: number;
  eventSeq: number;
  attemptNo: number;
  startedAt: string;
  statusCode: number | null;
  latencyMs: number | null;
  error: string | null;
  outcome: AttemptOutcome;
  instance: string | null;
}

export interface AttemptResult {
  state: 'delivered' | 'failed' | 'dead';
  /** Required for `failed`. */
  nextAttemptAt?: string;
  startedAt: string;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}
