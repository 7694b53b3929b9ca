import type { FastifyInstance } from 'fastify';
import type { SimContext } from '../context.js';
import { merchantOf } from '../gateway-hooks.js';
import { notifyTargets } from '../http.js';
import { parseOffsetTime, unitMs, uuid } from '../lib/format.js';
import { isObject, pickExtras, validateOrder, type Json } from '../lib/validate.js';
import { ALL_METHOD_KEYS, expandEnabled } from '../methods.js';
import type { SnapSession } from '../state.js';

const SNAP_CUSTOMER = { first_name: 255, last_name: 255, email: 255, phone: 255 };
const DAY_MS = 86_400_000;

/** `expiry` / `page_expiry`: {start_time?, duration, unit}; the token lives between 20 s and 7 days. */
export function parseLifetime(raw: unknown, field: string, errors: string[], now: Date): Date | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw)) {
    errors.push(`${field} must be an object`);
    return undefined;
  }
  const duration = typeof raw.duration === 'number' && Number.isInteger(raw.duration) ? raw.duration : undefined;
  const ms = typeof raw.unit === 'string' ? unitMs(raw.unit) : undefined;
  if (duration === undefined || duration < 1) errors.push(`${field}.duration must be an integer greater than 0`);
  if (ms === undefined) errors.push(`${field}.unit must be one of second, minute, hour, day`);
  let start = now;
  if (raw.start_time !== undefined) {
    const parsed = typeof raw.start_time === 'string' ? parseOffsetTime(raw.start_time) : undefined;
    if (!parsed) errors.push(`${field}.start_time must be formatted as 'yyyy-MM-dd HH:mm:ss Z'`);
    else start = parsed;
  }
  if (duration === undefined || ms === undefined) return undefined;
  const span = duration * ms;
  if (span < 20_000 || span > 7 * DAY_MS) errors.push(`${field} must be between 20 seconds and 7 days`);
  return new Date(start.getTime() + span);
}

export function parseEnabled(raw: unknown, errors: string[]): string[] {
  if (raw === undefined || raw === null) return [...ALL_METHOD_KEYS];
  if (!Array.isArray(raw) || !raw.every((x): x is string => typeof x === 'string')) {
    errors.push('enabled_payments must be an array of strings');
    return [];
  }
  const expanded = expandEnabled(raw);
  if (expanded.length === 0) errors.push('enabled_payments contains no supported payment method');
  return expanded;
}

export function registerSnap(scope: FastifyInstance, ctx: SimContext): void {
  scope.post('/snap/v1/transactions', async (req, reply) => {
    const body: Json = isObject(req.body) ? req.body : {};
    const errors: string[] = [];
    const now = new Date();
    const order = validateOrder(body, { customer: SNAP_CUSTOMER, grossRequired: true, orderIdRule: 'snap' }, errors);
    const enabled = parseEnabled(body.enabled_payments, errors);
    const txnExpiry = parseLifetime(body.expiry, 'expiry', errors, now);
    const pageExpiry = parseLifetime(body.page_expiry, 'page_expiry', errors, now);
    const extras = pickExtras(body, errors);
    if (errors.length > 0 || !order) return reply.code(400).send({ error_messages: errors });
    const { engine, ledger } = merchantOf(req);
    if (engine.orderIdTaken(order.order_id)) {
      return reply.code(400).send({ error_messages: ['transaction_details.order_id sudah digunakan'] });
    }
    // Before a method is picked the order id may be reused: the new token replaces the old one.
    const previous = ledger.openSnapByOrder(order.order_id);
    if (previous) previous.state = 'superseded';
    const session: SnapSession = {
      token: uuid(),
      order,
      enabled_payments: enabled,
      created_at: now,
      expires_at: pageExpiry ?? txnExpiry ?? new Date(now.getTime() + DAY_MS),
      state: 'open',
      notify: notifyTargets(req.headers),
      extras,
    };
    if (txnExpiry) session.txn_expiry = txnExpiry;
    ledger.snaps.set(session.token, session);
    ledger.snapByOrder.set(order.order_id, session.token);
    return reply
      .code(201)
      .send({ token: session.token, redirect_url: `${ctx.config.baseUrl}/snap/v3/redirection/${session.token}` });
  });
}
