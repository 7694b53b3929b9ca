import type { FastifyInstance } from 'fastify';
import type { SimContext } from '../context.js';
import { merchantOf } from '../gateway-hooks.js';
import { notifyTargets } from '../http.js';
import { parseOffsetTime, unitMs, uuid } from '../lib/format.js';
import { asInteger, isObject, pickExtras, validateOrder, type Json } from '../lib/validate.js';
import type { PaymentLink } from '../state.js';
import { parseEnabled } from './snap.js';
import { linkDetails } from './link-details.js';

const LINK_CUSTOMER = { first_name: 50, last_name: 50, email: 50, phone: 20 };
const LINK_UNITS = new Set(['day', 'days', 'hour', 'hours', 'minute', 'minutes']);
const PLID_RE = /^[a-z0-9-]+$/;

interface Expiry {
  start: Date;
  duration: number;
  unit: string;
}

function parseLinkExpiry(raw: unknown, errors: string[]): Expiry {
  const fallback: Expiry = { start: new Date(), duration: 1, unit: 'days' };
  if (raw === undefined || raw === null) return fallback;
  if (!isObject(raw)) {
    errors.push('expiry must be an object');
    return fallback;
  }
  const duration = asInteger(raw.duration);
  const unit = typeof raw.unit === 'string' ? raw.unit.toLowerCase() : '';
  if (duration === undefined || duration < 1) errors.push('expiry.duration must be an integer greater than 0');
  if (!LINK_UNITS.has(unit)) errors.push('expiry.unit must be one of day, hour, minute');
  let start = fallback.start;
  if (raw.start_time !== undefined) {
    const parsed = typeof raw.start_time === 'string' ? parseOffsetTime(raw.start_time) : undefined;
    if (!parsed) errors.push("expiry.start_time must be formatted as 'yyyy-MM-dd HH:mm:ss Z'");
    else start = parsed;
  }
  return { start, duration: duration ?? 1, unit: LINK_UNITS.has(unit) ? unit : 'days' };
}

function linkOptions(body: Json, errors: string[]): { plid?: string; usage: number; title?: string } {
  const td = isObject(body.transaction_details) ? body.transaction_details : {};
  const out: { plid?: string; usage: number; title?: string } = { usage: 1 };
  if (td.payment_link_id !== undefined) {
    const plid = td.payment_link_id;
    if (typeof plid !== 'string' || !PLID_RE.test(plid))
      errors.push('payment_link_id must only contain alphanumeric characters [a-z, 0-9] and hyphens [-]');
    else if (plid.length > 50) errors.push('payment_link_id must be at most 50 characters');
    else out.plid = plid;
  }
  if (body.usage_limit !== undefined) {
    const n = asInteger(body.usage_limit);
    if (n === undefined || n < 1 || n > 1_000_000) errors.push('usage_limit must be an integer between 1 and 1000000');
    else out.usage = n;
  }
  if (body.title !== undefined) {
    if (typeof body.title !== 'string' || body.title.length > 40)
      errors.push('title must be a string of at most 40 characters');
    else out.title = body.title;
  }
  return out;
}

type Dynamic = NonNullable<PaymentLink['dynamic_amount']>;

/**
 * `payment_link_type` and, for `DYNAMIC_AMOUNT`, `dynamic_amount` {min_amount, max_amount,
 * preset_amount?}. The gateway documents the fields but not their checks; the simulator holds them
 * to whole amounts ≥ 1 with min ≤ preset ≤ max (its own choice).
 */
function linkType(body: Json, errors: string[]): Dynamic | undefined {
  const type = body.payment_link_type;
  if (type === undefined || type === 'FIXED_AMOUNT') return undefined;
  if (type !== 'DYNAMIC_AMOUNT') {
    errors.push('payment_link_type must be one of FIXED_AMOUNT, DYNAMIC_AMOUNT');
    return undefined;
  }
  const raw = body.dynamic_amount;
  if (!isObject(raw)) {
    errors.push('dynamic_amount is required for DYNAMIC_AMOUNT');
    return undefined;
  }
  const read = (key: 'min_amount' | 'max_amount' | 'preset_amount', required: boolean): number | undefined => {
    if (raw[key] === undefined || raw[key] === null) {
      if (required) errors.push(`dynamic_amount.${key} is required`);
      return undefined;
    }
    const n = asInteger(raw[key]);
    if (n === undefined || n < 1) errors.push(`dynamic_amount.${key} must be an integer greater than 0`);
    return n;
  };
  const min = read('min_amount', true);
  const max = read('max_amount', true);
  const preset = read('preset_amount', false);
  if (min === undefined || max === undefined) return undefined;
  if (max < min) errors.push('dynamic_amount.max_amount must be greater than or equal to min_amount');
  if (preset !== undefined && (preset < min || preset > max))
    errors.push('dynamic_amount.preset_amount must be between min_amount and max_amount');
  return preset === undefined
    ? { min_amount: min, max_amount: max }
    : { min_amount: min, max_amount: max, preset_amount: preset };
}

/**
 * The amount of a purchase on `link`: its gross_amount on a fixed link; on a DYNAMIC_AMOUNT link
 * what the payer entered (`raw`, digits or a number; absent: the preset), refused outside the bounds.
 */
export function linkAmount(link: PaymentLink, raw: unknown): { amount: number } | { error: string } {
  const d = link.dynamic_amount;
  if (link.payment_link_type !== 'DYNAMIC_AMOUNT' || !d) return { amount: link.gross_amount };
  const given =
    raw === undefined || raw === '' ? d.preset_amount : asInteger(typeof raw === 'string' ? raw.trim() : raw);
  if (given === undefined || given < d.min_amount || given > d.max_amount)
    return { error: `amount must be an integer between ${d.min_amount} and ${d.max_amount}` };
  return { amount: given };
}

export function linkIsLive(link: PaymentLink, now = Date.now()): boolean {
  return link.deleted_at === undefined && link.expires_at.getTime() > now;
}

export function registerPaymentLinks(scope: FastifyInstance, ctx: SimContext): void {
  scope.post('/v1/payment-links', async (req, reply) => {
    if (!isObject(req.body)) return reply.code(400).send({ error_messages: ['Invalid JSON data provided.'] });
    const body = req.body;
    const errors: string[] = [];
    const dynamic = linkType(body, errors);
    const isDynamic = body.payment_link_type === 'DYNAMIC_AMOUNT';
    // A DYNAMIC_AMOUNT link ignores item_details and gross_amount.
    const order = validateOrder(
      isDynamic ? { ...body, item_details: undefined } : body,
      { customer: LINK_CUSTOMER, grossRequired: !isDynamic },
      errors,
    );
    const opts = linkOptions(body, errors);
    const expiry = parseLinkExpiry(body.expiry, errors);
    const enabled = parseEnabled(body.enabled_payments, errors);
    const extras = pickExtras(body, errors);
    const expiresAt = new Date(expiry.start.getTime() + expiry.duration * (unitMs(expiry.unit) ?? 86_400_000));
    if (errors.length === 0 && !Number.isFinite(expiresAt.getTime())) errors.push('expiry.duration is too large');
    else if (errors.length === 0 && expiresAt.getTime() <= Date.now()) errors.push('expiry must end in the future');
    if (errors.length > 0 || !order) return reply.code(400).send({ error_messages: errors });
    const m = merchantOf(req);
    const existing = m.ledger.linkByOrderId(order.order_id);
    // A deleted or expired link frees its order id (simulator choice, see README).
    if (existing && linkIsLive(existing)) {
      return reply.code(409).send({ error_messages: [`The Order ID '${order.order_id}' has been taken`] });
    }
    const plid = opts.plid ?? uuid();
    // The page URL names no merchant, so a link id taken by any merchant is taken.
    if (ctx.merchants.link(plid))
      return reply.code(400).send({ error_messages: [`This Payment Link ID '${plid}' has been taken`] });
    const link: PaymentLink = {
      id: m.ledger.nextLinkId++,
      order_id: order.order_id,
      payment_link_id: plid,
      payment_link_type: dynamic ? 'DYNAMIC_AMOUNT' : 'FIXED_AMOUNT',
      gross_amount: dynamic ? (dynamic.preset_amount ?? dynamic.min_amount) : order.gross_amount,
      items: dynamic ? [] : order.items,
      enabled_payments: enabled,
      usage_limit: opts.usage,
      expiry_start: expiry.start,
      expiry_duration: expiry.duration,
      expiry_unit: expiry.unit,
      expires_at: expiresAt,
      created_at: new Date(),
      purchases: [],
      notify: notifyTargets(req.headers),
      extras,
      credit_card_3d_secure: true,
      whitelist_bins: [],
    };
    if (order.customer) link.customer = order.customer;
    if (dynamic) link.dynamic_amount = dynamic;
    if (opts.title !== undefined) link.title = opts.title;
    m.ledger.links.set(plid, link);
    m.ledger.linkByOrder.set(order.order_id, plid);
    return reply
      .code(200)
      .send({ order_id: order.order_id, payment_url: `${ctx.config.baseUrl}/payment-links/${plid}` });
  });

  scope.get<{ Params: { orderId: string } }>('/v1/payment-links/:orderId', async (req, reply) => {
    const m = merchantOf(req);
    const link = m.ledger.linkByOrderId(req.params.orderId);
    if (!link || link.deleted_at)
      return reply.code(404).send({ error_messages: [`Payment Link with Order ID ${req.params.orderId} not found`] });
    return reply.send(linkDetails(m, ctx.config.baseUrl, link));
  });

  scope.delete<{ Params: { orderId: string } }>('/v1/payment-links/:orderId', async (req, reply) => {
    const link = merchantOf(req).ledger.linkByOrderId(req.params.orderId);
    if (!link || link.deleted_at)
      return reply.code(404).send({ error_messages: [`Payment Link with Order ID ${req.params.orderId} not found`] });
    link.deleted_at = new Date();
    return reply.send({ message: `Payment Link with Order ID ${link.order_id} deleted` });
  });
}
