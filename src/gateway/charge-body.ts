/** Core API charge requests (reference §3.2): one method object per payment type, checked before the call. */
import { Type, type Static, type TProperties } from 'typebox';
import { AppError } from '../errors.js';
import { truncate, type Customer, type GatewayExpiry, type Item } from './requests.js';

/** Internet banking and pay-later: the gateway answers pending with a `redirect_url` for the customer. */
export const REDIRECT_PAYMENT_TYPES = ['cimb_clicks', 'bri_epay', 'danamon_online', 'akulaku', 'kredivo', 'uob_ezpay'] as const;
export const PAYMENT_TYPES = ['bank_transfer', 'echannel', 'qris', 'gopay', 'shopeepay', 'cstore', 'credit_card', ...REDIRECT_PAYMENT_TYPES] as const;
export type PaymentType = (typeof PAYMENT_TYPES)[number];
const Text = (maxLength: number, description?: string) => Type.String({ maxLength, ...(description ? { description } : {}) });
const Lit = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));
const method = <P extends TProperties>(properties: P) => Type.Optional(Type.Object(properties, { additionalProperties: false }));

export const PaymentTypeSchema = Lit(PAYMENT_TYPES);

/**
 * The method objects of a charge request, one per payment type that takes one (reference §3.2);
 * the request carries the one its type needs. The route validates requests against this schema.
 */
export const ChargeMethodsSchema = Type.Object({
  bank_transfer: method({ bank: Lit(['bca', 'bni', 'bri', 'permata', 'cimb'] as const), va_number: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$', maxLength: 18 })) }),
  echannel: method({ bill_info1: Type.Optional(Text(10)), bill_info2: Type.Optional(Text(30)) }),
  qris: method({ acquirer: Type.Optional(Lit(['gopay', 'airpay shopee'] as const)) }),
  gopay: method({ enable_callback: Type.Optional(Type.Boolean()), callback_url: Type.Optional(Text(255)) }),
  cstore: method({ store: Lit(['alfamart', 'indomaret'] as const), message: Type.Optional(Text(40)) }),
  shopeepay: method({ callback_url: Type.Optional(Text(255)) }),
  credit_card: method({
    token_id: Type.String({ minLength: 1, maxLength: 255, description: 'From the gateway\'s GET /v2/token (browser side).' }),
    authentication: Type.Optional(Type.Boolean({ description: '3-D Secure: the answer is pending with the redirect_url of the 3DS page.' })),
  }),
  cimb_clicks: method({ description: Type.Optional(Text(100)) }),
  uob_ezpay: method({ callback_url: Type.Optional(Text(255)) }),
});
export type ChargeMethods = Static<typeof ChargeMethodsSchema>;

/** The payment types that take a method object of their own in the request. */
const METHOD_OBJECT_TYPES = Object.keys(ChargeMethodsSchema.properties).filter((k): k is keyof ChargeMethods => k in ChargeMethodsSchema.properties);

/** Core API custom expiry limit (bank pages: up to 180 days). */
export const MAX_CHARGE_EXPIRY_MINUTES = 180 * 24 * 60;

function bad(path: string, message: string): AppError {
  return new AppError('VALIDATION_FAILED', `${path} ${message}.`, { errors: [{ path, message }] });
}

/** The method object the payment type needs; objects for other types are refused, not ignored. */
export function methodObject(input: ChargeMethods & { order_id: string; payment_type: PaymentType; items?: unknown; customer?: unknown }): Record<string, unknown> {
  for (const t of METHOD_OBJECT_TYPES) if (t !== input.payment_type && input[t] !== undefined) throw bad(t, `does not belong to payment_type ${input.payment_type}`);
  switch (input.payment_type) {
    case 'bank_transfer':
      if (!input.bank_transfer) throw bad('bank_transfer', 'is required for payment_type bank_transfer');
      return { ...input.bank_transfer };
    case 'cstore':
      if (!input.cstore) throw bad('cstore', 'is required for payment_type cstore');
      return { ...input.cstore };
    case 'credit_card':
      if (!input.credit_card) throw bad('credit_card', 'is required for payment_type credit_card');
      return { ...input.credit_card };
    case 'echannel':
      // The gateway requires both bill lines; sensible defaults keep the ERP request small.
      return { bill_info1: truncate(input.echannel?.bill_info1 ?? 'Payment:', 10), bill_info2: truncate(input.echannel?.bill_info2 ?? input.order_id, 30) };
    case 'qris':
      return { ...(input.qris ?? {}) };
    case 'gopay':
      return { ...(input.gopay ?? {}) };
    case 'shopeepay':
      return { ...(input.shopeepay ?? {}) };
    case 'cimb_clicks':
      // The gateway requires a description; the order id is a sensible default.
      return { description: truncate(input.cimb_clicks?.description ?? `Payment ${input.order_id}`, 100) };
    case 'uob_ezpay':
      return { ...(input.uob_ezpay ?? {}) };
    case 'akulaku':
      // Akulaku scores the basket: the gateway refuses a charge without items and customer.
      if (!input.items) throw bad('items', 'is required for payment_type akulaku');
      if (!input.customer) throw bad('customer', 'is required for payment_type akulaku');
      return {};
    case 'bri_epay':
    case 'danamon_online':
    case 'kredivo':
      return {};
  }
}

export interface ChargeBodyInput {
  gatewayOrderId: string;
  nominal: number;
  paymentType: PaymentType;
  method: Record<string, unknown>;
  items?: Item[];
  customer?: Customer;
  expiry?: GatewayExpiry;
}

export function chargeBody(c: ChargeBodyInput): Record<string, unknown> {
  const body: Record<string, unknown> = {
    payment_type: c.paymentType,
    transaction_details: { order_id: c.gatewayOrderId, gross_amount: c.nominal },
  };
  // Types without a method object of their own send none.
  if (Object.keys(c.method).length > 0 || METHOD_OBJECT_TYPES.some((t) => t === c.paymentType)) body[c.paymentType] = c.method;
  if (c.items) body.item_details = c.items.map((it) => ({ ...it }));
  if (c.customer) body.customer_details = { ...c.customer };
  if (c.expiry) body.custom_expiry = { order_time: c.expiry.startTime, expiry_duration: c.expiry.durationMinutes, unit: 'minute' };
  return body;
}
