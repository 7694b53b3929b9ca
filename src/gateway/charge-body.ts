/** Core API charge requests (reference §3.2): one method object per payment type, checked before the call. */
import { AppError } from '../errors.js';
import { truncate, type Customer, type GatewayExpiry, type Item } from './requests.js';

/** Internet banking and pay-later: the gateway answers pending with a `redirect_url` for the customer. */
export const REDIRECT_PAYMENT_TYPES = ['cimb_clicks', 'bri_epay', 'danamon_online', 'akulaku', 'kredivo', 'uob_ezpay'] as const;
export const PAYMENT_TYPES = ['bank_transfer', 'echannel', 'qris', 'gopay', 'shopeepay', 'cstore', 'credit_card', ...REDIRECT_PAYMENT_TYPES] as const;
export type PaymentType = (typeof PAYMENT_TYPES)[number];
/** The payment types that take a method object of their own in the request. */
const METHOD_OBJECT_TYPES = ['bank_transfer', 'echannel', 'qris', 'gopay', 'shopeepay', 'cstore', 'credit_card', 'cimb_clicks', 'uob_ezpay'] as const;

/** The method objects of a charge request, one per payment type; the request carries the one its type needs. */
export interface ChargeMethods {
  bank_transfer?: { bank: 'bca' | 'bni' | 'bri' | 'permata' | 'cimb'; va_number?: string };
  echannel?: { bill_info1?: string; bill_info2?: string };
  qris?: { acquirer?: 'gopay' | 'airpay shopee' };
  gopay?: { enable_callback?: boolean; callback_url?: string };
  shopeepay?: { callback_url?: string };
  cstore?: { store: 'alfamart' | 'indomaret'; message?: string };
  credit_card?: { token_id: string; authentication?: boolean };
  cimb_clicks?: { description?: string };
  uob_ezpay?: { callback_url?: string };
}

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
  if (Object.keys(c.method).length > 0 || (METHOD_OBJECT_TYPES as readonly string[]).includes(c.paymentType)) body[c.paymentType] = c.method;
  if (c.items) body.item_details = c.items.map((it) => ({ ...it }));
  if (c.customer) body.customer_details = { ...c.customer };
  if (c.expiry) body.custom_expiry = { order_time: c.expiry.startTime, expiry_duration: c.expiry.durationMinutes, unit: 'minute' };
  return body;
}
