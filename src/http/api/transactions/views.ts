/** The operator's view of a transaction: no stored request or gateway bodies, no Snap token. */
import { Type } from 'typebox';
import type { TransactionRecord } from '../../../model/payment.js';
import { Nullable, PaymentStatusSchema } from '../../schemas/common.js';
import { apiTime, apiTimeOrNull } from '../../../platform/time.js';

const NullableText = Nullable(Type.String());

export const TransactionSchema = Type.Object({
  account: Type.Optional(
    Type.String({ description: 'The account (merchant) of the payment; present when the service has more than one' }),
  ),
  order_id: Type.String(),
  gateway_order_id: Type.String(),
  mercant_id: Type.String(),
  kind: Type.String(),
  attempt: Type.Integer(),
  nominal: Type.Integer({ description: "The order's amount, whole rupiah" }),
  paid_amount: Nullable(Type.Integer({ description: 'What the gateway reported as paid (gross), once paid' })),
  original_amount: Nullable(
    Type.Integer({ description: 'The amount before a customer-imposed fee, when the gateway reports one' }),
  ),
  refunded_amount: Type.Integer({ description: 'Cumulative rupiah refunded' }),
  fee_amount: Nullable(Type.Integer({ description: "The gateway's fee, from an imported settlement report" })),
  net_amount: Nullable(Type.Integer({ description: 'What reaches the merchant, from an imported settlement report' })),
  amount_mismatch: Type.Boolean({ description: 'The amount paid differs from the order amount' }),
  status: PaymentStatusSchema,
  transaction_status: NullableText,
  fraud_status: NullableText,
  payment_type: NullableText,
  transaction_id: NullableText,
  payment_url: NullableText,
  expire_at: NullableText,
  transaction_time: NullableText,
  settlement_time: NullableText,
  status_version: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export type TransactionView = ReturnType<typeof transactionView>;

export function transactionView(t: TransactionRecord) {
  return {
    order_id: t.orderId,
    gateway_order_id: t.gatewayOrderId,
    mercant_id: t.mercantId,
    kind: t.kind,
    attempt: t.attempt,
    nominal: t.nominal,
    paid_amount: t.paidAmount,
    original_amount: t.originalAmount,
    refunded_amount: t.refundedAmount,
    fee_amount: t.feeAmount,
    net_amount: t.netAmount,
    amount_mismatch: (t.flags ?? '').split(',').includes('amount_mismatch'),
    status: t.status,
    transaction_status: t.transactionStatus,
    fraud_status: t.fraudStatus,
    payment_type: t.paymentType,
    transaction_id: t.gatewayTransactionId,
    payment_url: t.paymentUrl,
    expire_at: apiTimeOrNull(t.expireAt),
    transaction_time: apiTimeOrNull(t.transactionTime),
    settlement_time: apiTimeOrNull(t.settlementTime),
    status_version: t.statusVersion,
    created_at: apiTime(t.createdAt),
    updated_at: apiTime(t.updatedAt),
  };
}
