/** What the ERP sees of charges, Snap tokens and payment status. */
import { Type, type Static } from 'typebox';
import type { TransactionRecord } from '../../../model/payment.js';
import { expiryTime, type GatewayAnswer } from '../../../gateway/answer.js';
import { NullableStr, OptionalStr, Str } from '../../schemas/common.js';
import { apiTime, apiTimeOrNull } from '../../../platform/time.js';

export const ChargeViewSchema = Type.Object({
  order_id: Str(),
  gateway_order_id: Str(50),
  transaction_id: Str(),
  status: Str(32),
  transaction_status: Str(64),
  payment_type: Str(64),
  va_numbers: Type.Optional(
    Type.Array(Type.Object({ bank: OptionalStr(32), va_number: OptionalStr(64) }), { maxItems: 20 }),
  ),
  permata_va_number: OptionalStr(64),
  bill_key: OptionalStr(64),
  biller_code: OptionalStr(64),
  payment_code: OptionalStr(64),
  actions: Type.Optional(
    Type.Array(Type.Object({ name: OptionalStr(64), method: OptionalStr(16), url: OptionalStr(2048) }), {
      maxItems: 20,
    }),
  ),
  qr_string: OptionalStr(4096),
  redirect_url: OptionalStr(2048),
  expiry_time: OptionalStr(40),
});
export type ChargeView = Static<typeof ChargeViewSchema>;

/** The charge answer's method details; the record holds the status (which only the status machine moves). */
export function chargeView(tx: TransactionRecord, res: GatewayAnswer): ChargeView {
  const view: ChargeView = {
    order_id: tx.orderId,
    gateway_order_id: tx.gatewayOrderId,
    transaction_id: res.transaction_id ?? tx.gatewayTransactionId ?? '',
    status: tx.status,
    transaction_status: res.transaction_status ?? tx.transactionStatus ?? 'pending',
    payment_type: res.payment_type ?? tx.paymentType ?? '',
  };
  for (const k of [
    'permata_va_number',
    'bill_key',
    'biller_code',
    'payment_code',
    'qr_string',
    'redirect_url',
  ] as const) {
    const v = res[k];
    if (v !== undefined) view[k] = v;
  }
  if (res.va_numbers) view.va_numbers = res.va_numbers;
  if (res.actions) view.actions = res.actions;
  const expiry = expiryTime(res);
  if (expiry !== undefined) view.expiry_time = apiTime(expiry);
  return view;
}

export const SnapViewSchema = Type.Object({
  order_id: Str(),
  gateway_order_id: Str(50),
  token: Str(),
  redirect_url: Str(2048),
});
export type SnapView = Static<typeof SnapViewSchema>;

export function snapView(tx: TransactionRecord): SnapView {
  return {
    order_id: tx.orderId,
    gateway_order_id: tx.gatewayOrderId,
    token: tx.snapToken ?? '',
    redirect_url: tx.paymentUrl ?? '',
  };
}

export const StatusViewSchema = Type.Object({
  order_id: Str(),
  gateway_order_id: Str(50),
  mercant_id: Str(),
  status: Str(32),
  transaction_status: NullableStr(64),
  fraud_status: NullableStr(64),
  payment_type: NullableStr(64),
  nominal: Type.Integer(),
  refunded_amount: Type.Integer({ minimum: 0, description: 'Cumulative rupiah refunded so far.' }),
  transaction_id: NullableStr(),
  expire_at: NullableStr(40),
  settlement_time: NullableStr(40),
  updated_at: Str(40),
});
export type StatusView = Static<typeof StatusViewSchema>;

/** A payment partly refunded: the example the reference shows under the status and action answers. */
export const STATUS_EXAMPLE = {
  order_id: 'INV/2026/0042:1',
  gateway_order_id: 'INV.2026.0042.1',
  mercant_id: 'INV/2026/0042',
  status: 'partially_refunded',
  transaction_status: 'partial_refund',
  fraud_status: 'accept',
  payment_type: 'qris',
  nominal: 150000,
  refunded_amount: 50000,
  transaction_id: '4da06f05-2348-40c5-8ca4-51343995284b',
  expire_at: '2026-11-23T10:00:00+07:00',
  settlement_time: '2026-11-22T10:05:00+07:00',
  updated_at: '2026-11-22T10:20:00+07:00',
};

export function statusView(tx: TransactionRecord): StatusView {
  return {
    order_id: tx.orderId,
    gateway_order_id: tx.gatewayOrderId,
    mercant_id: tx.mercantId,
    status: tx.status,
    transaction_status: tx.transactionStatus,
    fraud_status: tx.fraudStatus,
    payment_type: tx.paymentType,
    nominal: tx.nominal,
    refunded_amount: tx.refundedAmount,
    transaction_id: tx.gatewayTransactionId,
    expire_at: apiTimeOrNull(tx.expireAt),
    settlement_time: apiTimeOrNull(tx.settlementTime),
    updated_at: apiTime(tx.updatedAt),
  };
}
