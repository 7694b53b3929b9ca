/** What the gateway told paylink: each report as received, and what became of it. */

export const NOTIFICATION_SOURCES = ['webhook', 'replay', 'status_check', 'reconcile'] as const;
export type NotificationSource = (typeof NOTIFICATION_SOURCES)[number];
/** `received` only while the ingesting transaction runs; `rechecked` = an unverified one the reconciler has since resolved. */
export const NOTIFICATION_RESULTS = [
  'received',
  'applied',
  'duplicate',
  'stale',
  'unknown_status',
  'unverified',
  'ignored',
  'rechecked',
] as const;
export type NotificationResult = (typeof NOTIFICATION_RESULTS)[number];

export interface NotificationRecord {
  id: number;
  /** The account whose notification URL (or status check) it came through. */
  account: string;
  dedupeKey: string;
  gatewayOrderId: string;
  /** Our transaction id, once resolved. */
  transactionRef: string | null;
  gatewayTransactionId: string | null;
  transactionStatus: string | null;
  statusCode: string | null;
  source: NotificationSource;
  result: NotificationResult;
  /** The report as received (JSON text). */
  payload: string;
  /** Why it was not applied (unverified or ignored ones), e.g. the gateway answered about another order. */
  reason: string | null;
  receivedAt: string;
}

export type NewNotification = Omit<NotificationRecord, 'id' | 'account' | 'receivedAt' | 'reason'> & {
  reason?: string | null;
};

/** A notification's result once decided: the transaction it concerns, the gateway transaction confirmed for it, why it was not applied. */
export interface NotificationOutcomeUpdate {
  result: NotificationResult;
  transactionRef?: string | null;
  gatewayTransactionId?: string | null;
  reason?: string | null;
}
