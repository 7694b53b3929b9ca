/**
 * The order details every gateway call carries — items, customer, the payment window — and the
 * limits paylink holds them to before any call, so an input error is a 400 that never reaches the
 * gateway. Paylink's own terms: an adapter writes them into its gateway's request bodies.
 */
import { Type, type Static } from 'typebox';

/** The gateway's order id limit (Payment Link, Snap and Core all accept 50). */
export const ORDER_ID_MAX = 50;
/** The most purchases one payment link takes. */
export const USAGE_LIMIT_MAX = 1_000_000;
/** Item ids and names. */
export const ITEM_TEXT_MAX = 50;

/** Per-field customer limits: Payment Link 50/50/50/20; Snap and Core 255. */
export interface CustomerLimits {
  first_name: number;
  last_name: number;
  email: number;
  phone: number;
}
export const LINK_CUSTOMER_LIMITS: CustomerLimits = { first_name: 50, last_name: 50, email: 50, phone: 20 };
export const CORE_CUSTOMER_LIMITS: CustomerLimits = { first_name: 255, last_name: 255, email: 255, phone: 255 };

const customerSchema = (l: CustomerLimits) =>
  Type.Object(
    {
      first_name: Type.Optional(Type.String({ minLength: 1, maxLength: l.first_name })),
      last_name: Type.Optional(Type.String({ minLength: 1, maxLength: l.last_name })),
      email: Type.Optional(Type.String({ minLength: 1, maxLength: l.email })),
      phone: Type.Optional(Type.String({ minLength: 1, maxLength: l.phone })),
    },
    { additionalProperties: false },
  );

/** `customer_details` for Snap and Core charges. */
export const CustomerSchema = customerSchema(CORE_CUSTOMER_LIMITS);
/** `customer_details` for a Payment Link: the same fields, tighter limits. */
export const LinkCustomerSchema = customerSchema(LINK_CUSTOMER_LIMITS);
/** Customer details, each field within the limits of the API it goes to. */
export type Customer = Static<typeof CustomerSchema>;

/** An `item_details` line: integer prices (negative for discounts), quantity ≥ 1. */
export const ItemSchema = Type.Object(
  {
    id: Type.Optional(Type.String({ minLength: 1, maxLength: ITEM_TEXT_MAX })),
    name: Type.String({ minLength: 1, maxLength: ITEM_TEXT_MAX }),
    price: Type.Integer(),
    quantity: Type.Integer({ minimum: 1 }),
  },
  { additionalProperties: false },
);
export type Item = Static<typeof ItemSchema>;

/** The payment window: `start_time` in the gateway's format, and its length in whole minutes. */
/**
 * The bounds of an open-amount link: the payer enters any whole amount from `min` to `max`
 * (`preset`, when given, is what the page suggests). The gateway's least amount is 1 rupiah.
 */
export interface OpenAmount {
  min: number;
  max: number;
  preset?: number;
}

/** Whether `amount` is one an open-amount link with `bounds` takes. */
export function withinOpenAmount(amount: number, bounds: OpenAmount): boolean {
  return Number.isSafeInteger(amount) && amount >= bounds.min && amount <= bounds.max;
}

export interface GatewayExpiry {
  startTime: string;
  durationMinutes: number;
}

/** Cuts to `max` UTF-16 units without leaving half a surrogate pair. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  return /[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut;
}
