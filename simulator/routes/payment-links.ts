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
  if (body.payment_link_type !== undefined && body.payment_link_type !== 'FIXED_AMOUNT') {
    errors.push('payment_link_type must be FIXED_AMOUNT (DYNAMIC_AMOUNT is not simulated)');
  }
  return out;
}

export function linkIsLive(link: PaymentLink, now = Date.now()): boolean {
  return link.deleted_at === undefined && link.expires_at.getTime() > now;
}

export function registerPaymentLinks(scope: FastifyInstance, ctx: SimContext): void {
  scope.post('/v1/payment-links', async (req, reply) => {
    if (!isObject(req.body)) return reply.code(400).send({ error_messages: ['Invalid JSON data provided.'] });
    const body = req.body;
    const errors: string[] = [];
    const order = validateOrder(body, { customer: LINK_CUSTOMER, grossRequired: true }, errors);
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
      payment_link_type: 'FIXED_AMOUNT',
      gross_amount: order.gross_amount,
      items: order.items,
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
