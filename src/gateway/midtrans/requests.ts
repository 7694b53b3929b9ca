/**
 * Request bodies for the Payment Link, Snap and refund APIs, one schema
 * each, written from the order details of `gateway/order.ts`. The builders below produce these
 * types; the client's methods take nothing else.
 */
import { Type, type Static } from 'typebox';
import { compiledCheck } from './compiled-check.js';
import { CustomerSchema, ItemSchema, LinkCustomerSchema, ORDER_ID_MAX, USAGE_LIMIT_MAX } from '../order.js';
import type { PaymentLinkOrder, SnapOrder } from '../port.js';

/** `transaction_details`: the gateway's order id and a whole, positive amount of rupiah. */
const orderDetails = {
  order_id: Type.String({ minLength: 1, maxLength: ORDER_ID_MAX }),
  gross_amount: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
};
export const TransactionDetailsSchema = Type.Object(orderDetails, { additionalProperties: false });

/** `yyyy-MM-dd HH:mm:ss Z`, as `gatewayTime` writes it. */
export const GatewayTimeSchema = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2} [+-]\\d{4}$' });
const Minutes = Type.Integer({ minimum: 1 });

/**
 * The Payment Link create body. `usage_limit` counts paid purchases; each purchase
 * is a gateway transaction of its own under the link's order id with a suffix. A `DYNAMIC_AMOUNT`
 * link lets the payer enter the amount within `dynamic_amount`; the gateway then ignores
 * `item_details` and `gross_amount` (no items are sent; `gross_amount` still is, as in the gateway's own sample).
 */
export const PaymentLinkRequestSchema = Type.Object(
  {
    transaction_details: Type.Object(
      { ...orderDetails, payment_link_id: Type.String({ pattern: '^[a-z0-9-]{1,50}$' }) },
      { additionalProperties: false },
    ),
    usage_limit: Type.Integer({ minimum: 1, maximum: USAGE_LIMIT_MAX }),
    expiry: Type.Object(
      { start_time: GatewayTimeSchema, duration: Minutes, unit: Type.Literal('minutes') },
      { additionalProperties: false },
    ),
    item_details: Type.Optional(Type.Array(ItemSchema, { minItems: 1 })),
    customer_details: Type.Optional(LinkCustomerSchema),
    enabled_payments: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
    payment_link_type: Type.Optional(Type.Literal('DYNAMIC_AMOUNT')),
    dynamic_amount: Type.Optional(
      Type.Object(
        {
          min_amount: Type.Integer({ minimum: 1 }),
          max_amount: Type.Integer({ minimum: 1 }),
          preset_amount: Type.Optional(Type.Integer({ minimum: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type PaymentLinkRequest = Static<typeof PaymentLinkRequestSchema>;
const isPaymentLinkRequest = compiledCheck(PaymentLinkRequestSchema);

export function paymentLinkBody(i: PaymentLinkOrder): PaymentLinkRequest {
  const body: PaymentLinkRequest = {
    transaction_details: { order_id: i.gatewayOrderId, gross_amount: i.nominal, payment_link_id: i.paymentLinkId },
    usage_limit: i.usageLimit ?? 1,
    expiry: { start_time: i.expiry.startTime, duration: i.expiry.durationMinutes, unit: 'minutes' },
  };
  if (i.openAmount) {
    const { min, max, preset } = i.openAmount;
    body.payment_link_type = 'DYNAMIC_AMOUNT';
    body.dynamic_amount = {
      min_amount: min,
      max_amount: max,
      ...(preset === undefined ? {} : { preset_amount: preset }),
    };
  } else {
    body.item_details = i.items.map((it) => ({
      ...(it.id !== undefined ? { id: it.id } : {}),
      name: it.name,
      price: it.price,
      quantity: it.quantity,
    }));
  }
  if (i.customer) body.customer_details = { ...i.customer };
  if (i.enabledPayments.length > 0) body.enabled_payments = [...i.enabledPayments];
  return body;
}

/**
 * A Payment Link body stored at creation and sent again on a retry (the gateway must see the same
 * `payment_link_id` and expiry). Throws when the stored text is not such a body.
 */
export function storedPaymentLinkRequest(stored: unknown): PaymentLinkRequest {
  if (!isPaymentLinkRequest(stored))
    throw new Error('the stored Payment Link request is not a Payment Link create body');
  return stored;
}

/** The Snap transaction body (https://docs.midtrans.com/reference/request-body-json-parameter). */
export const SnapRequestSchema = Type.Object(
  {
    transaction_details: TransactionDetailsSchema,
    item_details: Type.Optional(Type.Array(ItemSchema, { minItems: 1 })),
    customer_details: Type.Optional(CustomerSchema),
    enabled_payments: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
    expiry: Type.Optional(
      Type.Object(
        { start_time: GatewayTimeSchema, unit: Type.Literal('minute'), duration: Minutes },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type SnapRequest = Static<typeof SnapRequestSchema>;

export function snapBody(i: SnapOrder): SnapRequest {
  const body: SnapRequest = { transaction_details: { order_id: i.gatewayOrderId, gross_amount: i.nominal } };
  if (i.items) body.item_details = i.items.map((it) => ({ ...it }));
  if (i.customer) body.customer_details = { ...i.customer };
  if (i.enabledPayments.length > 0) body.enabled_payments = [...i.enabledPayments];
  if (i.expiry) body.expiry = { start_time: i.expiry.startTime, unit: 'minute', duration: i.expiry.durationMinutes };
  return body;
}

/**
 * The refund body (https://docs.midtrans.com/reference/refund-transaction): `refund_key` is the
 * idempotency key the gateway keeps the refund under; no `amount` refunds the rest.
 */
export const RefundRequestSchema = Type.Object(
  {
    refund_key: Type.String({ pattern: '^[A-Za-z0-9_-]{1,100}$' }),
    amount: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
    reason: Type.Optional(Type.String({ maxLength: 255 })),
  },
  { additionalProperties: false },
);
export type RefundRequest = Static<typeof RefundRequestSchema>;
