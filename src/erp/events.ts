/**
 * The ERP event bodies of CONTRACT §4. Built once when the event is written; the serialized bytes
 * are stored in the outbox and sent unchanged on every retry.
 */
import type { PaymentStatus, TransactionRecord } from '../storage/store.js';
import { toJakartaIso } from '../gateway/time.js';

export const STATUS_CHANGED = 'payment.status_changed';
export const TEST_EVENT = 'payment.test';

export interface StatusChangedEvent {
  type: typeof STATUS_CHANGED;
  event_id: string;
  /** Stored at creation, derived from the ORIGINAL order id (never the sanitized gateway id). */
  mercant_id: string;
  order_id: string;
  gateway_order_id: string;
  status: PaymentStatus;
  transaction_status: string | null;
  fraud_status: string | null;
  payment_type: string | null;
  gross_amount: number;
  transaction_id: string | null;
  transaction_time: string | null;
  settlement_time: string | null;
  occurred_at: string;
  /** Incremented on every forwarded change of this order; the ERP may order by it. */
  status_version: number;
  /** Cumulative rupiah refunded; on `refunded` and `partially_refunded` events only. */
  refunded_amount?: number;
}

/** `tx` is the record after the change was applied. */
export function statusChangedEvent(tx: TransactionRecord, grossAmount: number, eventId: string, occurredAt: Date): StatusChangedEvent {
  return {
    type: STATUS_CHANGED,
    event_id: eventId,
    mercant_id: tx.mercantId,
    order_id: tx.orderId,
    gateway_order_id: tx.gatewayOrderId,
    status: tx.status,
    transaction_status: tx.transactionStatus,
    fraud_status: tx.fraudStatus,
    payment_type: tx.paymentType,
    gross_amount: grossAmount,
    transaction_id: tx.gatewayTransactionId,
    transaction_time: tx.transactionTime,
    settlement_time: tx.settlementTime,
    occurred_at: toJakartaIso(occurredAt),
    status_version: tx.statusVersion,
    ...(tx.status === 'refunded' || tx.status === 'partially_refunded' ? { refunded_amount: tx.refundedAmount } : {}),
  };
}

export interface TestEventInput {
  mercant_id?: string;
  order_id?: string;
  status?: PaymentStatus;
}

/** A clearly marked test event (`type: payment.test`, `test: true`), same shape as a real one. */
export function testEvent(input: TestEventInput, eventId: string, occurredAt: Date) {
  const orderId = input.order_id ?? `TEST:${eventId.slice(0, 8)}`;
  const mercantId = input.mercant_id ?? orderId.split(':')[0] ?? orderId;
  return {
    type: TEST_EVENT,
    event_id: eventId,
    test: true,
    mercant_id: mercantId,
    order_id: orderId,
    gateway_order_id: orderId.replace(/[^A-Za-z0-9\-_~.]/g, '.'),
    status: input.status ?? 'paid',
    transaction_status: null,
    fraud_status: null,
    payment_type: null,
    gross_amount: 0,
    transaction_id: null,
    transaction_time: null,
    settlement_time: null,
    occurred_at: toJakartaIso(occurredAt),
    status_version: 0,
  };
}
