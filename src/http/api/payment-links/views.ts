/** What the ERP sees of a payment link: the creation answer, plus the current state on GET. */
import { Type, type Static } from 'typebox';
import type { TransactionRecord } from '../../../model/payment.js';
import { NullableStr, Str } from '../../schemas/common.js';
import { apiTime, apiTimeOrNull } from '../../../platform/time.js';
import { linkOpenAmount, linkUsageLimit } from '../../../domain/orders/records.js';

export const LinkViewSchema = Type.Object({
  order_id: Str(),
  gateway_order_id: Str(50),
  mercant_id: Str(),
  payment_url: NullableStr(2048),
  status: Str(32),
  nominal: Type.Integer(),
  expire_at: NullableStr(40),
  created_at: Str(40),
  usage_limit: Type.Optional(
    Type.Integer({
      minimum: 2,
      description: 'Present on a link used more than once: how many purchases it takes; each is a payment of its own',
    }),
  ),
  amount_type: Type.Optional(
    Type.Literal('open', {
      description:
        'Present on an open-amount link: the payer enters the amount within min_nominal–max_nominal; nominal is then max_nominal, and each purchase is a payment of its own',
    }),
  ),
  min_nominal: Type.Optional(Type.Integer({ description: 'Open-amount link: the least a purchase pays' })),
  max_nominal: Type.Optional(Type.Integer({ description: 'Open-amount link: the most a purchase pays' })),
  preset_nominal: Type.Optional(Type.Integer({ description: 'Open-amount link: the amount its page suggests' })),
});
export type LinkView = Static<typeof LinkViewSchema>;

export const LinkDetailViewSchema = Type.Object({
  ...LinkViewSchema.properties,
  transaction_status: NullableStr(64),
  payment_type: NullableStr(64),
  transaction_id: NullableStr(),
  settlement_time: NullableStr(40),
  updated_at: Str(40),
  purchases: Type.Optional(
    Type.Array(
      Type.Object({
        order_id: Str(),
        gateway_order_id: Str(),
        status: Str(32),
        gross_amount: Type.Integer(),
        payment_type: NullableStr(64),
        transaction_id: NullableStr(),
        created_at: Str(40),
      }),
      {
        description:
          'Present on a link used more than once or with an open amount: its purchases (oldest first, at most 1,000), each a payment with its own order_id and events',
      },
    ),
  ),
});
export type LinkDetailView = Static<typeof LinkDetailViewSchema>;

/** A link as created: the example the reference shows under the creating routes. */
export const LINK_EXAMPLE = {
  order_id: 'INV/2026/0042:1',
  gateway_order_id: 'INV.2026.0042.1',
  mercant_id: 'INV/2026/0042',
  payment_url: 'https://app.midtrans.com/payment-links/pl-d8c4687194071ce6ba',
  status: 'pending',
  nominal: 150000,
  expire_at: '2026-11-23T10:00:00+07:00',
  created_at: '2026-11-22T10:00:00+07:00',
};

/** The same link once paid, as resolved. */
export const LINK_DETAIL_EXAMPLE = {
  ...LINK_EXAMPLE,
  status: 'paid',
  transaction_status: 'settlement',
  payment_type: 'qris',
  transaction_id: '4da06f05-2348-40c5-8ca4-51343995284b',
  settlement_time: '2026-11-22T10:05:00+07:00',
  updated_at: '2026-11-22T10:05:00+07:00',
};

export function linkView(tx: TransactionRecord): LinkView {
  const view: LinkView = {
    order_id: tx.orderId,
    gateway_order_id: tx.gatewayOrderId,
    mercant_id: tx.mercantId,
    payment_url: tx.paymentUrl,
    status: tx.status,
    nominal: tx.nominal,
    expire_at: apiTimeOrNull(tx.expireAt),
    created_at: apiTime(tx.createdAt),
  };
  const usage = linkUsageLimit(tx);
  const open = linkOpenAmount(tx);
  return {
    ...view,
    ...(usage > 1 ? { usage_limit: usage } : {}),
    ...(open === undefined
      ? {}
      : {
          amount_type: 'open' as const,
          min_nominal: open.min,
          max_nominal: open.max,
          ...(open.preset === undefined ? {} : { preset_nominal: open.preset }),
        }),
  };
}

/** `purchases`: given for a link used more than once (see `linkPurchases`), even when empty. */
export function linkDetailView(tx: TransactionRecord, purchases?: readonly TransactionRecord[]): LinkDetailView {
  return {
    ...linkView(tx),
    transaction_status: tx.transactionStatus,
    payment_type: tx.paymentType,
    transaction_id: tx.gatewayTransactionId,
    settlement_time: apiTimeOrNull(tx.settlementTime),
    updated_at: apiTime(tx.updatedAt),
    ...(purchases === undefined
      ? {}
      : {
          purchases: purchases.map((p) => ({
            order_id: p.orderId,
            gateway_order_id: p.gatewayOrderId,
            status: p.status,
            gross_amount: p.paidAmount ?? p.nominal,
            payment_type: p.paymentType,
            transaction_id: p.gatewayTransactionId,
            created_at: apiTime(p.createdAt),
          })),
        }),
  };
}
