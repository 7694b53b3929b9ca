/** Refund requests: kept before the gateway is called, each with its own gateway `refund_key`. */

export const REFUND_STATES = ['requested', 'approved', 'refused', 'not_made'] as const;
export type RefundState = (typeof REFUND_STATES)[number];

export interface RefundRecord {
  id: string;
  transactionRef: string;
  refundKey: string;
  /** Requested rupiah; null = the rest (only on requests kept by earlier versions). */
  amount: number | null;
  reason: string | null;
  state: RefundState;
  actor: string;
  gatewayCode: string | null;
  /** While in the future, a request is calling the gateway with this refund. */
  leaseUntil: string | null;
  /** The caller's Idempotency-Key (hashed with its credential), when it gave one. */
  requestKey: string | null;
  createdAt: string;
  updatedAt: string;
}

export type NewRefund = Pick<
  RefundRecord,
  'id' | 'transactionRef' | 'refundKey' | 'amount' | 'reason' | 'actor' | 'leaseUntil' | 'requestKey'
>;
