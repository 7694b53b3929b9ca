/**
 * The ERP event bodies. Built once when the event is written; the serialized bytes
 * are stored in the outbox and sent unchanged on every retry.
 */
import { Type, type Static } from 'typebox';
import { PAYMENT_STATUSES, type TransactionRecord } from '../model/payment.js';
import { toJakartaIso } from '../platform/time.js';

export const STATUS_CHANGED = 'payment.status_changed' as const;
export const TEST_EVENT = 'payment.test' as const;

const OrNull = Type.Union([Type.String(), Type.Null()]);

/**
 * The ERP event, the one source of its TypeScript type, of the schema in the OpenAPI
 * document (under `webhooks`) and of the check the tests run on the events we send.
 */
export const ErpEventSchema = Type.Object(
  {
    type: Type.Enum([STATUS_CHANGED, TEST_EVENT]),
    event_id: Type.String(),
    /** Stored at creation, derived from the ORIGINAL order id (never the sanitized gateway id). */
    mercant_id: Type.String(),
    order_id: Type.String(),
    payment_link_order_id: Type.Optional(
      Type.String({
        description:
          "On a purchase made on a payment link used more than once (usage_limit > 1): the link's order_id. Each purchase is a payment of its own, with its own order_id and events",
      }),
    ),
    gateway_order_id: Type.String(),
    status: Type.Enum(PAYMENT_STATUSES),
    transaction_status: OrNull,
    fraud_status: OrNull,
    payment_type: OrNull,
    gross_amount: Type.Integer(),
    transaction_id: OrNull,
    transaction_time: OrNull,
    settlement_time: OrNull,
    occurred_at: Type.String({ format: 'date-time' }),
    status_version: Type.Integer({
      minimum: 0,
      description:
        'Grows with every forwarded status change of the order: an event with a lower version than one already processed is older news',
    }),
    refunded_amount: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Cumulative rupiah refunded so far; present on refunded and partially_refunded events',
      }),
    ),
    expected_amount: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          "The order's amount as paylink created it; compare with gross_amount (what the gateway reports as paid)",
      }),
    ),
    amount_mismatch: Type.Optional(
      Type.Boolean({
        description:
          'True when the amount paid (before a customer-imposed fee, where the gateway reports one) differs from expected_amount: book it by hand rather than as paid in full',
      }),
    ),
    test: Type.Optional(
      Type.Boolean({ description: 'Present (true) only on the test events of POST /test-notify-erp' }),
    ),
    account: Type.Optional(
      Type.String({
        description:
          'The account (merchant) the event belongs to. Present only when the service has more than one account, so the events of a one-account service are exactly as before accounts existed',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ErpEvent = Static<typeof ErpEventSchema>;

/** `tx` is the record after the change was applied. */
export function statusChangedEvent(
  tx: TransactionRecord,
  grossAmount: number,
  eventId: string,
  occurredAt: Date,
  /** Named in the body (see `account` in the schema); absent on a one-account service. */
  account?: string,
): ErpEvent {
  return {
    type: STATUS_CHANGED,
    event_id: eventId,
    mercant_id: tx.mercantId,
    order_id: tx.orderId,
    ...(tx.paymentLinkOrderId === null ? {} : { payment_link_order_id: tx.paymentLinkOrderId }),
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
    expected_amount: tx.nominal,
    amount_mismatch: (tx.flags ?? '').split(',').includes('amount_mismatch'),
    ...(account === undefined ? {} : { account }),
  };
}

/**
 * The statuses a test event may carry: never `paid`, so a receiver that looks only at `status`
 * cannot book a test event as a payment (it should look at `type` first).
 */
export const TEST_EVENT_STATUSES = PAYMENT_STATUSES.filter((s) => s !== 'paid');

/** What `POST /test-notify-erp` may set on a test event; everything else is fixed or derived. */
export const TestEventInputSchema = Type.Object(
  {
    mercant_id: Type.Optional(Type.String({ maxLength: 100 })),
    order_id: Type.Optional(Type.String({ maxLength: 100 })),
    status: Type.Optional(Type.Enum(TEST_EVENT_STATUSES, { description: 'Any status but `paid`; default `pending`.' })),
  },
  { additionalProperties: false },
);
export type TestEventInput = Static<typeof TestEventInputSchema>;

/** A clearly marked test event (`type: payment.test`, `test: true`), same shape as a real one. */
export function testEvent(input: TestEventInput, eventId: string, occurredAt: Date): ErpEvent {
  const orderId = input.order_id ?? `TEST:${eventId.slice(0, 8)}`;
  const mercantId = input.mercant_id ?? orderId.split(':')[0] ?? orderId;
  return {
    type: TEST_EVENT,
    event_id: eventId,
    test: true,
    mercant_id: mercantId,
    order_id: orderId,
    gateway_order_id: orderId.replace(/[^A-Za-z0-9\-_~.]/g, '.'),
    status: input.status ?? 'pending',
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
