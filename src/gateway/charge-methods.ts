/**
 * The payment types a charge takes and the method object each one carries, as paylink's
 * `POST /api/charge` accepts them (named as Midtrans Core names them): checked and
 * completed here before anything is stored or sent, so a wrong combination is a 400.
 */
import { Type, type Static, type TLiteral, type TProperties, type TUnion } from 'typebox';
import { AppError } from '../platform/errors.js';
import { truncate } from './order.js';

/** Internet banking and pay-later: the gateway answers pending with a `redirect_url` for the customer. */
export const REDIRECT_PAYMENT_TYPES = [
  'cimb_clicks',
  'bri_epay',
  'danamon_online',
  'akulaku',
  'kredivo',
  'uob_ezpay',
] as const;
export const PAYMENT_TYPES = [
  'bank_transfer',
  'echannel',
  'qris',
  'gopay',
  'shopeepay',
  'cstore',
  'credit_card',
  ...REDIRECT_PAYMENT_TYPES,
] as const;
export type PaymentType = (typeof PAYMENT_TYPES)[number];
/** Core API custom expiry limit (bank pages: up to 180 days). */
export const MAX_CHARGE_EXPIRY_MINUTES = 180 * 24 * 60;
const Text = (maxLength: number, description?: string) =>
  Type.String({ maxLength, ...(description ? { description } : {}) });
type Literals<T extends readonly string[]> = { -readonly [K in keyof T]: TLiteral<T[K]> };
/** One literal per value; `map` keeps order and length, and the cast names the tuple TypeScript cannot see through it, so the union's type is exact. */
function Lit<const T extends readonly string[]>(values: T): TUnion<Literals<T>> {
  return Type.Union(values.map((v) => Type.Literal(v)) as [...Literals<T>]);
}
const object = <P extends TProperties>(properties: P) => Type.Object(properties, { additionalProperties: false });

export const PaymentTypeSchema = Lit(PAYMENT_TYPES);

const BankTransfer = object({
  // `bsi` and `seabank` as the VA-number object names them; Danamon's VA is charged
  // through BI-SNAP only (docs.midtrans.com "Integration: Bank Transfer"), Saqu's bank string is unconfirmed.
  bank: Lit(['bca', 'bni', 'bri', 'permata', 'cimb', 'bsi', 'seabank'] as const),
  va_number: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$', maxLength: 18 })),
});
const Qris = object({ acquirer: Type.Optional(Lit(['gopay', 'airpay shopee'] as const)) });
const Gopay = object({ enable_callback: Type.Optional(Type.Boolean()), callback_url: Type.Optional(Text(255)) });
const Cstore = object({ store: Lit(['alfamart', 'indomaret'] as const), message: Type.Optional(Text(40)) });
const Shopeepay = object({ callback_url: Type.Optional(Text(255)) });
const CreditCard = object({
  token_id: Type.String({
    minLength: 1,
    maxLength: 255,
    description: "From the gateway's GET /v2/token (browser side).",
  }),
  authentication: Type.Optional(
    Type.Boolean({ description: '3-D Secure: the answer is pending with the redirect_url of the 3DS page.' }),
  ),
});
const UobEzpay = object({ callback_url: Type.Optional(Text(255)) });

/**
 * The method objects of a charge request, one per payment type that takes one;
 * the request carries the one its type needs. The route validates requests against this schema.
 */
export const ChargeMethodsSchema = Type.Object({
  bank_transfer: Type.Optional(BankTransfer),
  echannel: Type.Optional(object({ bill_info1: Type.Optional(Text(10)), bill_info2: Type.Optional(Text(30)) })),
  qris: Type.Optional(Qris),
  gopay: Type.Optional(Gopay),
  cstore: Type.Optional(Cstore),
  shopeepay: Type.Optional(Shopeepay),
  credit_card: Type.Optional(CreditCard),
  cimb_clicks: Type.Optional(object({ description: Type.Optional(Text(100)) })),
  uob_ezpay: Type.Optional(UobEzpay),
});
export type ChargeMethods = Static<typeof ChargeMethodsSchema>;

/** The method objects as sent: the gateway requires both bill lines and a CIMB Clicks description, so those are always filled. */
export const SentMethods = {
  bank_transfer: BankTransfer,
  echannel: object({ bill_info1: Text(10), bill_info2: Text(30) }),
  qris: Qris,
  gopay: Gopay,
  cstore: Cstore,
  shopeepay: Shopeepay,
  credit_card: CreditCard,
  cimb_clicks: object({ description: Text(100) }),
  uob_ezpay: UobEzpay,
};
export type SentMethods = typeof SentMethods;
/** What `methodObject` gives: the method object of one payment type, empty for the types that take none. */
export type ChargeMethodObject =
  { [K in keyof SentMethods]: Static<SentMethods[K]> }[keyof SentMethods] | Record<string, never>;

/** The payment types that take a method object of their own in the request. */
export const METHOD_OBJECT_TYPES = Object.keys(ChargeMethodsSchema.properties).filter(
  (k): k is keyof ChargeMethods => k in ChargeMethodsSchema.properties,
);

function bad(path: string, message: string): AppError {
  return new AppError('VALIDATION_FAILED', `${path} ${message}.`, { errors: [{ path, message }] });
}

/** The method object the payment type needs; objects for other types are refused, not ignored. */
export function methodObject(
  input: ChargeMethods & { order_id: string; payment_type: PaymentType; items?: unknown; customer?: unknown },
): ChargeMethodObject {
  for (const t of METHOD_OBJECT_TYPES)
    if (t !== input.payment_type && input[t] !== undefined)
      throw bad(t, `does not belong to payment_type ${input.payment_type}`);
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
      return {
        bill_info1: truncate(input.echannel?.bill_info1 ?? 'Payment:', 10),
        bill_info2: truncate(input.echannel?.bill_info2 ?? input.order_id, 30),
      };
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
