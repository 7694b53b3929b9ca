/** Core API charge requests: one body per payment type, checked before the call. */
import { Type, type Static, type TProperties } from 'typebox';
import { compiledCheck } from './compiled-check.js';
import { GatewayTimeSchema, TransactionDetailsSchema } from './requests.js';
import { CustomerSchema, ItemSchema } from '../order.js';
import { MAX_CHARGE_EXPIRY_MINUTES, METHOD_OBJECT_TYPES, SentMethods, type PaymentType } from '../charge-methods.js';
import type { ChargeOrder } from '../port.js';

const object = <P extends TProperties>(properties: P) => Type.Object(properties, { additionalProperties: false });

const chargeOf = <T extends PaymentType, P extends TProperties>(paymentType: T, method: P) =>
  object({
    payment_type: Type.Literal(paymentType),
    ...method,
    transaction_details: TransactionDetailsSchema,
    item_details: Type.Optional(Type.Array(ItemSchema, { minItems: 1 })),
    customer_details: Type.Optional(CustomerSchema),
    custom_expiry: Type.Optional(
      object({
        order_time: GatewayTimeSchema,
        expiry_duration: Type.Integer({ minimum: 1, maximum: MAX_CHARGE_EXPIRY_MINUTES }),
        unit: Type.Literal('minute'),
      }),
    ),
  });

/**
 * The Core API charge body: one shape per payment type, carrying that type's method object under
 * its name (types that take none carry none).
 */
export const ChargeRequestSchema = Type.Union([
  chargeOf('bank_transfer', { bank_transfer: SentMethods.bank_transfer }),
  chargeOf('echannel', { echannel: SentMethods.echannel }),
  chargeOf('qris', { qris: SentMethods.qris }),
  chargeOf('gopay', { gopay: SentMethods.gopay }),
  chargeOf('shopeepay', { shopeepay: SentMethods.shopeepay }),
  chargeOf('cstore', { cstore: SentMethods.cstore }),
  chargeOf('credit_card', { credit_card: SentMethods.credit_card }),
  chargeOf('cimb_clicks', { cimb_clicks: SentMethods.cimb_clicks }),
  chargeOf('uob_ezpay', { uob_ezpay: SentMethods.uob_ezpay }),
  chargeOf('akulaku', {}),
  chargeOf('bri_epay', {}),
  chargeOf('danamon_online', {}),
  chargeOf('kredivo', {}),
]);
export type ChargeRequest = Static<typeof ChargeRequestSchema>;
const isChargeRequest = compiledCheck(ChargeRequestSchema);

/**
 * The charge body. Which method object belongs to which payment type is known only when the body
 * is put together, so the body is checked against its schema here: a mismatch is a defect, thrown
 * before anything reaches the gateway.
 */
export function chargeBody(c: ChargeOrder): ChargeRequest {
  const body: Record<string, unknown> = {
    payment_type: c.paymentType,
    transaction_details: { order_id: c.gatewayOrderId, gross_amount: c.nominal },
  };
  // Types without a method object of their own send none.
  if (Object.keys(c.method).length > 0 || METHOD_OBJECT_TYPES.some((t) => t === c.paymentType))
    body[c.paymentType] = c.method;
  if (c.items) body.item_details = c.items.map((it) => ({ ...it }));
  if (c.customer) body.customer_details = { ...c.customer };
  if (c.expiry)
    body.custom_expiry = { order_time: c.expiry.startTime, expiry_duration: c.expiry.durationMinutes, unit: 'minute' };
  if (!isChargeRequest(body))
    throw new Error(`charge body for payment_type ${c.paymentType} does not match the charge request schema`);
  return body;
}
