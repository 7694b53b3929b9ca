/**
 * Request bodies for the Payment Link and Snap APIs (reference §1.2, §2), and the order details
 * (items, customer, payment window) that they and Core charges share.
 */

/** An `item_details` line: integer prices (negative for discounts), quantity ≥ 1. */
export interface Item {
  id?: string;
  name: string;
  price: number;
  quantity: number;
}

/** `customer_details`: each field already within the limits of the API it goes to. */
export interface Customer {
  first_name?: string;
  last_name?: string;
  email?: string;
  phone?: string;
}

/** The payment window: `start_time` in the gateway's format, and its length in whole minutes. */
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

export interface LinkBodyInput {
  gatewayOrderId: string;
  paymentLinkId: string;
  nominal: number;
  items: Item[];
  customer?: Customer;
  expiry: GatewayExpiry;
  enabledPayments: string[];
}

/** The Payment Link create body (reference §1.2). One use only: a link pays one order. */
export function paymentLinkBody(i: LinkBodyInput): Record<string, unknown> {
  const body: Record<string, unknown> = {
    transaction_details: { order_id: i.gatewayOrderId, gross_amount: i.nominal, payment_link_id: i.paymentLinkId },
    usage_limit: 1,
    expiry: { start_time: i.expiry.startTime, duration: i.expiry.durationMinutes, unit: 'minutes' },
    item_details: i.items.map((it) => ({ ...(it.id !== undefined ? { id: it.id } : {}), name: it.name, price: it.price, quantity: it.quantity })),
  };
  if (i.customer) body.customer_details = { ...i.customer };
  if (i.enabledPayments.length > 0) body.enabled_payments = [...i.enabledPayments];
  return body;
}

export interface SnapBodyInput {
  gatewayOrderId: string;
  nominal: number;
  items?: Item[];
  customer?: Customer;
  expiry?: GatewayExpiry;
  enabledPayments: string[];
}

/** The Snap transaction body (reference §2). */
export function snapBody(i: SnapBodyInput): Record<string, unknown> {
  const body: Record<string, unknown> = { transaction_details: { order_id: i.gatewayOrderId, gross_amount: i.nominal } };
  if (i.items) body.item_details = i.items.map((it) => ({ ...it }));
  if (i.customer) body.customer_details = { ...i.customer };
  if (i.enabledPayments.length > 0) body.enabled_payments = [...i.enabledPayments];
  if (i.expiry) body.expiry = { start_time: i.expiry.startTime, unit: 'minute', duration: i.expiry.durationMinutes };
  return body;
}
