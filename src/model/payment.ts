/** A payment as paylink keeps it: its statuses, kinds and the record every layer reads. */

export const PAYMENT_STATUSES = [
  'pending',
  'paid',
  'challenge',
  'failed',
  'cancelled',
  'expired',
  'refunded',
  'partially_refunded',
  'chargeback',
] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/**
 * `link_purchase`: one purchase on a payment link used more than once (`usage_limit` > 1), a payment
 * of its own under the gateway order id the gateway gave it (the link's with a suffix).
 */
export const TRANSACTION_KINDS = ['payment_link', 'snap', 'charge', 'external', 'link_purchase'] as const;
export type TransactionKind = (typeof TRANSACTION_KINDS)[number];

/**
 * The gateway API that carried a payment: the legacy Core API or BI-SNAP. Decided when the payment
 * is created, from `gateway.snap_bi.methods`, and never changed: later calls on it (status,
 * cancel, refund) follow it, whatever the methods list says by then.
 */
export const CARRIERS = ['legacy', 'snap_bi'] as const;
export type Carrier = (typeof CARRIERS)[number];

export interface TransactionRecord {
  id: string;
  /** The account (merchant) it belongs to; an order id is unique within its account. */
  account: string;
  orderId: string;
  gatewayOrderId: string;
  mercantId: string;
  kind: TransactionKind;
  attempt: number;
  /** Whole rupiah. */
  nominal: number;
  status: PaymentStatus;
  transactionStatus: string | null;
  fraudStatus: string | null;
  paymentType: string | null;
  gatewayTransactionId: string | null;
  paymentUrl: string | null;
  paymentLinkId: string | null;
  /** For a `link_purchase`: the `order_id` of the payment link it was bought on; null otherwise. */
  paymentLinkOrderId: string | null;
  /** Which gateway API created it; `legacy` for every payment made before BI-SNAP was recorded. */
  carrier: Carrier;
  snapToken: string | null;
  requestHash: string | null;
  /** Normalized creating request (items, customer, …) as JSON text. */
  requestJson: string | null;
  /** Last gateway answer (create or status) as JSON text, secrets never included. */
  gatewayJson: string | null;
  expireAt: string | null;
  settlementTime: string | null;
  transactionTime: string | null;
  statusVersion: number;
  /** Cumulative rupiah refunded, as the gateway reported it. */
  refundedAmount: number;
  /** Whole rupiah the gateway reported as paid (its gross amount), once paid; null before. */
  paidAmount: number | null;
  /** The amount before a customer-imposed fee or a promo, when the gateway reports one. */
  originalAmount: number | null;
  /** The gateway's fee and what reaches the merchant, when a settlement report gives them. */
  feeAmount: number | null;
  netAmount: number | null;
  flags: string | null;
  lastEventAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export type NewTransaction = Omit<
  TransactionRecord,
  | 'account'
  | 'createdAt'
  | 'updatedAt'
  | 'statusVersion'
  | 'refundedAmount'
  | 'paidAmount'
  | 'originalAmount'
  | 'feeAmount'
  | 'netAmount'
  | 'lastEventAt'
  | 'flags'
  | 'settlementTime'
  | 'transactionTime'
  | 'transactionStatus'
  | 'fraudStatus'
  | 'paymentType'
  | 'gatewayTransactionId'
  | 'paymentLinkOrderId'
  | 'carrier'
> &
  Partial<
    Pick<
      TransactionRecord,
      | 'statusVersion'
      | 'flags'
      | 'settlementTime'
      | 'transactionTime'
      | 'transactionStatus'
      | 'fraudStatus'
      | 'paymentType'
      | 'gatewayTransactionId'
      | 'paymentLinkOrderId'
      | 'carrier'
    >
  >;

export type TransactionPatch = Partial<
  Omit<
    TransactionRecord,
    'id' | 'account' | 'orderId' | 'gatewayOrderId' | 'paymentLinkOrderId' | 'createdAt' | 'updatedAt'
  >
>;
