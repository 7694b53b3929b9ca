import { grossString, jakartaTime, midtransSignature } from './lib/format.js';
import type { Json } from './lib/validate.js';
import type { Txn } from './state.js';

export type CodePurpose = 'status' | 'notification';

/**
 * The gateway reports cancel and expire differently in API answers ("200" / "407") and in
 * notifications ("202" for both); a challenged capture is "201" (older docs' "challenge").
 */
export function statusCodeOf(t: Txn, purpose: CodePurpose): string {
  switch (t.status) {
    case 'pending':
      return '201';
    case 'capture':
      return t.fraud_status === 'challenge' ? '201' : '200';
    case 'deny':
      return '202';
    case 'cancel':
      return purpose === 'status' ? '200' : '202';
    case 'expire':
      return purpose === 'status' ? '407' : '202';
    default:
      return '200';
  }
}

function refundFields(t: Txn): Json {
  if (t.refunds.length === 0) return {};
  const total = t.refunds.reduce((a, r) => a + r.refund_amount, 0);
  return {
    refund_amount: grossString(total),
    refunds: t.refunds.map((r) => {
      const out: Json = {
        refund_chargeback_id: r.refund_chargeback_id,
        refund_amount: grossString(r.refund_amount),
        created_at: jakartaTime(r.created_at),
        reason: r.reason ?? '',
        refund_key: r.refund_key ?? String(r.refund_chargeback_id),
        refund_method: 'online',
      };
      if (r.bank_confirmed_at) out.bank_confirmed_at = jakartaTime(r.bank_confirmed_at);
      return out;
    }),
  };
}

/** Fields shared by status bodies and notifications, in the gateway's order. */
function commonFields(t: Txn): Json {
  const out: Json = {
    transaction_time: jakartaTime(t.transaction_time),
    transaction_status: t.status,
    transaction_id: t.transaction_id,
  };
  return out;
}

function tailFields(t: Txn): Json {
  const out: Json = {
    payment_type: t.payment_type,
    order_id: t.order_id,
    merchant_id: t.merchant_id,
    gross_amount: grossString(t.gross_amount),
    currency: 'IDR',
  };
  if (t.fraud_status) out.fraud_status = t.fraud_status;
  if (t.settlement_time) out.settlement_time = jakartaTime(t.settlement_time);
  if (t.expiry_time) out.expiry_time = jakartaTime(t.expiry_time);
  // A copy deep enough that a payload captured now (a pending notification held back by the
  // reorder fault) never shows what happens to the transaction later (its payment_amounts).
  return structuredClone({ ...out, ...t.fields, ...t.extras, ...refundFields(t) });
}

export function statusBody(t: Txn, serverKey: string, message = 'Success, transaction is found'): Json {
  const code = statusCodeOf(t, 'status');
  return {
    ...commonFields(t),
    status_code: code,
    status_message: message,
    signature_key: midtransSignature(t.order_id, code, grossString(t.gross_amount), serverKey),
    ...tailFields(t),
  };
}

export function notificationPayload(t: Txn, serverKey: string): Json {
  const code = statusCodeOf(t, 'notification');
  return {
    ...commonFields(t),
    status_message: 'midtrans payment notification',
    status_code: code,
    signature_key: midtransSignature(t.order_id, code, grossString(t.gross_amount), serverKey),
    ...tailFields(t),
  };
}

/** Charge answers carry no signature_key; QRIS also repeats the expiry as `expire_time`. */
export function chargeBody(t: Txn, message: string): Json {
  const body: Json = {
    status_code: statusCodeOf(t, 'status'),
    status_message: message,
    transaction_id: t.transaction_id,
    order_id: t.order_id,
    ...(t.redirect_url !== undefined && t.status === 'pending' ? { redirect_url: t.redirect_url } : {}),
    merchant_id: t.merchant_id,
    gross_amount: grossString(t.gross_amount),
    currency: 'IDR',
    payment_type: t.payment_type,
    transaction_time: jakartaTime(t.transaction_time),
    transaction_status: t.status,
    ...t.fields,
    ...t.extras,
  };
  if (t.fraud_status) body.fraud_status = t.fraud_status;
  if (t.expiry_time) body.expiry_time = jakartaTime(t.expiry_time);
  if (t.payment_type === 'qris' && t.expiry_time) body.expire_time = jakartaTime(t.expiry_time);
  return body;
}
