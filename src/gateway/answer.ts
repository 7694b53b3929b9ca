/**
 * The gateway's answer about one transaction, in the fields paylink's report vocabulary uses (those
 * of Midtrans Core, which the contract's charge view passes on to the ERP). An adapter parses its
 * gateway's answers into this shape; unknown fields are kept but never trusted.
 */
import { Type, type Static } from 'typebox';

const Str = Type.String({ maxLength: 4096 });

/** The answer about one transaction: charge, status, cancel, expire, refund… and notifications share this shape. */
export const GatewayAnswerSchema = Type.Object({
  status_code: Str,
  status_message: Type.Optional(Str),
  transaction_id: Type.Optional(Str),
  order_id: Type.Optional(Str),
  gross_amount: Type.Optional(Str),
  payment_type: Type.Optional(Str),
  transaction_time: Type.Optional(Str),
  transaction_status: Type.Optional(Str),
  fraud_status: Type.Optional(Str),
  settlement_time: Type.Optional(Str),
  expiry_time: Type.Optional(Str),
  expire_time: Type.Optional(Str),
  signature_key: Type.Optional(Str),
  va_numbers: Type.Optional(
    Type.Array(Type.Object({ bank: Type.Optional(Str), va_number: Type.Optional(Str) }), { maxItems: 20 }),
  ),
  permata_va_number: Type.Optional(Str),
  bill_key: Type.Optional(Str),
  biller_code: Type.Optional(Str),
  payment_code: Type.Optional(Str),
  store: Type.Optional(Str),
  qr_string: Type.Optional(Str),
  actions: Type.Optional(
    Type.Array(Type.Object({ name: Type.Optional(Str), method: Type.Optional(Str), url: Type.Optional(Str) }), {
      maxItems: 20,
    }),
  ),
  redirect_url: Type.Optional(Str),
  refund_amount: Type.Optional(Str),
  refunds: Type.Optional(
    Type.Array(
      Type.Object({
        refund_key: Type.Optional(Str),
        refund_amount: Type.Optional(Str),
        refund_chargeback_id: Type.Optional(Type.Union([Type.Number(), Str])),
      }),
      { maxItems: 1000 },
    ),
  ),
});
export type GatewayAnswer = Static<typeof GatewayAnswerSchema>;

/** When a Core transaction expires: the charge answer spells it `expire_time`, the status API `expiry_time` (a real gateway inconsistency). */
export function expiryTime(res: GatewayAnswer): string | undefined {
  return res.expiry_time ?? res.expire_time;
}

/** The refund keys a status answer lists as made (the gateway keeps each refund with the key it was asked with). */
export function refundKeys(res: GatewayAnswer): Set<string> {
  return new Set(
    (res.refunds ?? []).map((r) => r.refund_key).filter((k): k is string => typeof k === 'string' && k.length > 0),
  );
}
