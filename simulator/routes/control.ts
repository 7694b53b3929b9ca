import type { FastifyInstance, FastifyReply } from 'fastify';
import type { SimContext } from '../context.js';
import type { ActionResult } from '../engine.js';
import { parseFaults } from '../faults.js';
import { asInteger, isObject, optString } from '../lib/validate.js';
import { methodFromLoose } from '../methods.js';
import { statusBody } from '../payloads.js';
import type { Txn } from '../state.js';
import { linkIsLive } from './payment-links.js';

type Found = { txn: Txn } | { status: number; error: string; message: string };

function fail(reply: FastifyReply, status: number, error: string, message: string): FastifyReply {
  return reply.code(status).send({ error, message });
}

/** A link's order id stands for its newest purchase. */
function findForAction(ctx: SimContext, id: string): Txn | undefined {
  const t = ctx.ledger.findTxn(id);
  if (t) return t;
  const link = ctx.ledger.linkByOrderId(id);
  const last = link?.purchases[link.purchases.length - 1];
  return last ? ctx.ledger.txns.get(last.transaction_id) : undefined;
}

/** `pay` on a link or an untouched Snap order first makes the purchase, as a customer would. */
function findOrCreateForPay(ctx: SimContext, id: string, body: unknown): Found {
  const method = methodFromLoose(isObject(body) ? optString(body, 'payment_type') : undefined);
  if (!method) return { status: 400, error: 'bad_request', message: 'unknown payment_type' };
  const snap = ctx.ledger.openSnapByOrder(id) ?? ctx.ledger.snaps.get(id);
  const t = ctx.ledger.findTxn(id);
  if (t && (t.status === 'pending' || !snap || snap.state !== 'open')) return { txn: t };
  if (snap && snap.state === 'open' && snap.transaction_id === undefined) {
    if (snap.expires_at.getTime() <= Date.now()) return { status: 410, error: 'gone', message: 'Snap token expired' };
    return { txn: ctx.engine.pickSnapMethod(snap, method) };
  }
  if (t) return { txn: t };
  const link = ctx.ledger.linkByOrderId(id);
  if (!link) return { status: 404, error: 'not_found', message: `no transaction, link or Snap order '${id}'` };
  if (!linkIsLive(link)) return { status: 410, error: 'gone', message: 'payment link expired or deleted' };
  const pending = link.purchases.map((p) => ctx.ledger.txns.get(p.transaction_id)).find((x) => x?.status === 'pending');
  if (pending) return { txn: pending };
  if (ctx.engine.linkUsage(link).paid >= link.usage_limit)
    return { status: 409, error: 'conflict', message: 'payment link fully used' };
  return { txn: ctx.engine.createPurchase(link, method) };
}

function runAction(ctx: SimContext, t: Txn, action: string, body: unknown): ActionResult | undefined {
  switch (action) {
    case 'pay':
      return ctx.engine.pay(t);
    case 'expire':
      return ctx.engine.expire(t);
    case 'cancel':
      return ctx.engine.cancel(t);
    case 'deny':
      return ctx.engine.forceDeny(t);
    case 'challenge':
      return ctx.engine.challenge(t);
    case 'refund': {
      const amount = isObject(body) ? asInteger(body.amount) : undefined;
      const r = ctx.engine.refund(t, amount === undefined ? {} : { amount }, true);
      return r.ok ? { ok: true, txn: r.txn, message: r.message } : r;
    }
    default:
      return undefined;
  }
}

function registerActions(app: FastifyInstance, ctx: SimContext): void {
  app.post<{ Params: { id: string; action: string } }>('/_sim/transactions/:id/:action', async (req, reply) => {
    const { id, action } = req.params;
    if (!['pay', 'expire', 'deny', 'cancel', 'refund', 'challenge'].includes(action)) {
      return fail(reply, 404, 'not_found', `unknown action '${action}'`);
    }
    const found: Found = action === 'pay' ? findOrCreateForPay(ctx, id, req.body) : wrap(findForAction(ctx, id), id);
    if (!('txn' in found)) return fail(reply, found.status, found.error, found.message);
    const r = runAction(ctx, found.txn, action, req.body);
    if (!r || !r.ok) {
      return reply.code(409).send({
        error: 'not_allowed',
        message: r?.message ?? 'not allowed',
        transaction: statusBody(found.txn, ctx.serverKey),
      });
    }
    return reply.send(statusBody(r.txn, ctx.serverKey, r.message));
  });
}

function wrap(t: Txn | undefined, id: string): Found {
  return t ? { txn: t } : { status: 404, error: 'not_found', message: `no transaction '${id}'` };
}

function registerInspection(app: FastifyInstance, ctx: SimContext): void {
  const view = (t: Txn): object => ({
    ...statusBody(t, ctx.serverKey),
    _sim: { method: t.method, source: t.source, notify: t.notify },
  });
  app.get('/_sim/transactions', async () => ({ transactions: [...ctx.ledger.txns.values()].map(view) }));
  app.get<{ Params: { id: string } }>('/_sim/transactions/:id', async (req, reply) => {
    const t = ctx.ledger.findTxn(req.params.id);
    return t ? view(t) : fail(reply, 404, 'not_found', `no transaction '${req.params.id}'`);
  });
  app.get<{ Querystring: { order_id?: string; transaction_id?: string } }>('/_sim/notifications', async (req) => {
    const { order_id: orderId, transaction_id: trx } = req.query;
    const isLink = orderId !== undefined && ctx.ledger.linkByOrderId(orderId) !== undefined;
    const list = ctx.notifier.records.filter(
      (r) =>
        (orderId === undefined || r.order_id === orderId || (isLink && r.order_id.startsWith(`${orderId}-`))) &&
        (trx === undefined || r.transaction_id === trx),
    );
    return { notifications: list };
  });
  app.get<{ Querystring: { path?: string; api?: string } }>('/_sim/requests', async (req) => {
    const { path, api } = req.query;
    return {
      requests: ctx.ledger.requests.filter(
        (r) => (path === undefined || r.path.includes(path)) && (api === undefined || r.api === api),
      ),
    };
  });
}

function registerSettings(app: FastifyInstance, ctx: SimContext): void {
  app.get('/_sim/faults', async () => ctx.faults);
  app.put('/_sim/faults', async (req, reply) => {
    const parsed = parseFaults(req.body, ctx.defaultFaults());
    if ('errors' in parsed)
      return reply.code(400).send({ error: 'bad_request', message: parsed.errors.join('; '), errors: parsed.errors });
    ctx.faults = parsed.faults;
    if (!ctx.faults.reorder) ctx.notifier.flushHeld();
    return ctx.faults;
  });
  app.delete('/_sim/faults', async () => {
    ctx.faults = ctx.defaultFaults();
    ctx.notifier.flushHeld();
    return ctx.faults;
  });
  app.get('/_sim/config', async () => configView(ctx));
  app.put('/_sim/config', async (req, reply) => {
    const body = isObject(req.body) ? req.body : undefined;
    const errors = body ? validateConfig(body) : ['body must be a JSON object'];
    if (errors.length > 0 || !body)
      return reply.code(400).send({ error: 'bad_request', message: errors.join('; '), errors });
    if ('notification_url' in body)
      ctx.config.notificationUrl = typeof body.notification_url === 'string' ? body.notification_url : undefined;
    if (typeof body.time_scale === 'number') ctx.config.timeScale = body.time_scale;
    return configView(ctx);
  });
  app.post('/_sim/reset', async () => {
    ctx.ledger.clear();
    ctx.notifier.clear();
    ctx.idempotency.clear();
    ctx.faults = ctx.defaultFaults();
    return { reset: true };
  });
}

function configView(ctx: SimContext): object {
  return {
    notification_url: ctx.config.notificationUrl ?? null,
    time_scale: ctx.config.timeScale,
    base_url: ctx.config.baseUrl,
  };
}

function validateConfig(body: Record<string, unknown>): string[] {
  const errors: string[] = [];
  for (const k of Object.keys(body))
    if (k !== 'notification_url' && k !== 'time_scale') errors.push(`unknown field '${k}'`);
  const url = body.notification_url;
  if (url !== undefined && url !== null && (typeof url !== 'string' || !isHttpUrl(url)))
    errors.push('notification_url must be an http(s) URL or null');
  const ts = body.time_scale;
  if (ts !== undefined && (typeof ts !== 'number' || !(ts > 0) || ts > 1000))
    errors.push('time_scale must be a number > 0 and ≤ 1000');
  return errors;
}

export function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

export function registerControl(app: FastifyInstance, ctx: SimContext): void {
  registerActions(app, ctx);
  registerInspection(app, ctx);
  registerSettings(app, ctx);
}
