import type { FastifyInstance, FastifyReply } from 'fastify';
import type { SimContext } from '../context.js';
import type { ActionResult, Engine } from '../engine.js';
import { parseFaults } from '../faults.js';
import { asInteger, isHttpUrl, isObject, optString } from '../lib/validate.js';
import type { Merchant } from '../merchants.js';
import { methodFromLoose } from '../methods.js';
import { statusBody } from '../payloads.js';
import type { Txn } from '../state.js';
import { linkAmount, linkIsLive } from './payment-links.js';

type Failure = { status: number; error: string; message: string };
type Found = { txn: Txn } | Failure;

function fail(reply: FastifyReply, f: Failure): FastifyReply {
  return reply.code(f.status).send(f);
}

/** `?merchant_id=` as given: absent, one MID, or a repeated or empty one, which names nothing. */
function namedMerchant(ctx: SimContext, query: unknown): { named: Merchant | undefined } | Failure {
  const raw = isObject(query) ? query.merchant_id : undefined;
  if (raw === undefined) return { named: undefined };
  if (typeof raw !== 'string' || raw === '')
    return { status: 400, error: 'bad_request', message: 'merchant_id must be one merchant id' };
  const named = ctx.merchants.byId(raw);
  return named ? { named } : { status: 404, error: 'not_found', message: `no merchant '${raw}'` };
}

/**
 * The merchant a control call on `id` is for: the one `?merchant_id=` names, else the only one that
 * `has` it. Order ids are unique per merchant only, so two merchants having it is a conflict the
 * caller settles by naming one; no merchant having it leaves the default's "not found".
 */
function merchantFor(
  ctx: SimContext,
  id: string,
  query: unknown,
  has: (m: Merchant) => boolean,
): { merchant: Merchant } | Failure {
  const choice = namedMerchant(ctx, query);
  if ('status' in choice) return choice;
  if (choice.named) return { merchant: choice.named };
  const knowing = ctx.merchants.all().filter(has);
  const [only, ...others] = knowing;
  if (others.length > 0) {
    const ids = knowing.map((m) => m.id);
    return {
      status: 409,
      error: 'ambiguous',
      message: `'${id}' exists in merchants ${ids.join(', ')}: name one with ?merchant_id=`,
    };
  }
  return { merchant: only ?? ctx.merchants.defaultMerchant() };
}

/** A link's order id stands for its newest purchase. */
function findForAction(m: Merchant, id: string): Txn | undefined {
  const t = m.ledger.findTxn(id);
  if (t) return t;
  const link = m.ledger.linkByOrderId(id);
  const last = link?.purchases[link.purchases.length - 1];
  return last ? m.ledger.txns.get(last.transaction_id) : undefined;
}

/** `pay` on a link or an untouched Snap order first makes the purchase, as a customer would. */
function findOrCreateForPay(m: Merchant, id: string, body: unknown): Found {
  const method = methodFromLoose(isObject(body) ? optString(body, 'payment_type') : undefined);
  if (!method) return { status: 400, error: 'bad_request', message: 'unknown payment_type' };
  const { ledger, engine } = m;
  const snap = ledger.openSnapByOrder(id) ?? ledger.snaps.get(id);
  const t = ledger.findTxn(id);
  if (t && (t.status === 'pending' || !snap || snap.state !== 'open')) return { txn: t };
  if (snap && snap.state === 'open' && snap.transaction_id === undefined) {
    if (snap.expires_at.getTime() <= Date.now()) return { status: 410, error: 'gone', message: 'Snap token expired' };
    return { txn: engine.pickSnapMethod(snap, method) };
  }
  if (t) return { txn: t };
  const link = ledger.linkByOrderId(id);
  if (!link) return { status: 404, error: 'not_found', message: `no transaction, link or Snap order '${id}'` };
  if (!linkIsLive(link)) return { status: 410, error: 'gone', message: 'payment link expired or deleted' };
  const pending = link.purchases.map((p) => ledger.txns.get(p.transaction_id)).find((x) => x?.status === 'pending');
  if (pending) return { txn: pending };
  if (engine.linkUsage(link).paid >= link.usage_limit)
    return { status: 409, error: 'conflict', message: 'payment link fully used' };
  const amount = linkAmount(link, isObject(body) ? body.amount : undefined);
  if ('error' in amount) return { status: 400, error: 'bad_request', message: amount.error };
  return { txn: engine.createPurchase(link, method, amount.amount) };
}

function runAction(engine: Engine, t: Txn, action: string, body: unknown): ActionResult | undefined {
  switch (action) {
    case 'pay':
      return engine.pay(t);
    case 'expire':
      return engine.expire(t);
    case 'cancel':
      return engine.cancel(t);
    case 'deny':
      return engine.forceDeny(t);
    case 'challenge':
      return engine.challenge(t);
    case 'refund': {
      const amount = isObject(body) ? asInteger(body.amount) : undefined;
      const r = engine.refund(t, amount === undefined ? {} : { amount }, true);
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
      return fail(reply, { status: 404, error: 'not_found', message: `unknown action '${action}'` });
    }
    const owner = merchantFor(ctx, id, req.query, (m) =>
      action === 'pay' ? m.knows(id) : findForAction(m, id) !== undefined,
    );
    if ('status' in owner) return fail(reply, owner);
    const m = owner.merchant;
    const found: Found = action === 'pay' ? findOrCreateForPay(m, id, req.body) : wrap(findForAction(m, id), id);
    if (!('txn' in found)) return fail(reply, found);
    const r = runAction(m.engine, found.txn, action, req.body);
    if (!r || !r.ok) {
      return reply.code(409).send({
        error: 'not_allowed',
        message: r?.message ?? 'not allowed',
        transaction: statusBody(found.txn, m.serverKey),
      });
    }
    return reply.send(statusBody(r.txn, m.serverKey, r.message));
  });
}

function wrap(t: Txn | undefined, id: string): Found {
  return t ? { txn: t } : { status: 404, error: 'not_found', message: `no transaction '${id}'` };
}

/** The merchants `?merchant_id=` leaves in view: the named one, or all. */
function inView(ctx: SimContext, query: unknown): readonly Merchant[] | Failure {
  const choice = namedMerchant(ctx, query);
  if ('status' in choice) return choice;
  return choice.named ? [choice.named] : ctx.merchants.all();
}

function registerInspection(app: FastifyInstance, ctx: SimContext): void {
  const view = (m: Merchant, t: Txn): object => ({
    ...statusBody(t, m.serverKey),
    _sim: { method: t.method, source: t.source, notify: t.notify },
  });
  app.get('/_sim/transactions', async (req, reply) => {
    const merchants = inView(ctx, req.query);
    if ('status' in merchants) return fail(reply, merchants);
    return { transactions: merchants.flatMap((m) => [...m.ledger.txns.values()].map((t) => view(m, t))) };
  });
  app.get<{ Params: { id: string } }>('/_sim/transactions/:id', async (req, reply) => {
    const { id } = req.params;
    const owner = merchantFor(ctx, id, req.query, (m) => m.ledger.findTxn(id) !== undefined);
    if ('status' in owner) return fail(reply, owner);
    const t = owner.merchant.ledger.findTxn(req.params.id);
    return t
      ? view(owner.merchant, t)
      : fail(reply, { status: 404, error: 'not_found', message: `no transaction '${req.params.id}'` });
  });
  app.get<{ Querystring: { order_id?: string; transaction_id?: string } }>(
    '/_sim/notifications',
    async (req, reply) => {
      const merchants = inView(ctx, req.query);
      if ('status' in merchants) return fail(reply, merchants);
      const { order_id: orderId, transaction_id: trx } = req.query;
      const ids = new Set(merchants.map((m) => m.id));
      const isLink = orderId !== undefined && merchants.some((m) => m.ledger.linkByOrderId(orderId) !== undefined);
      const list = ctx.notifier.records.filter(
        (r) =>
          ids.has(r.merchant_id) &&
          (orderId === undefined || r.order_id === orderId || (isLink && r.order_id.startsWith(`${orderId}-`))) &&
          (trx === undefined || r.transaction_id === trx),
      );
      return { notifications: list };
    },
  );
  app.get<{ Querystring: { path?: string; api?: string; merchant_id?: string } }>('/_sim/requests', async (req) => {
    const { path, api, merchant_id: merchantId } = req.query;
    return {
      requests: ctx.requests.entries.filter(
        (r) =>
          (path === undefined || r.path.includes(path)) &&
          (api === undefined || r.api === api) &&
          (merchantId === undefined || r.merchant_id === merchantId),
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
    ctx.merchants.clear();
    ctx.requests.clear();
    ctx.notifier.clear();
    ctx.faults = ctx.defaultFaults();
    return { reset: true };
  });
}

/** The merchants are shown by MID and notification URL; their keys are never shown. */
function configView(ctx: SimContext): object {
  const url = ctx.config.notificationUrl ?? null;
  return {
    notification_url: url,
    time_scale: ctx.config.timeScale,
    base_url: ctx.config.baseUrl,
    merchants: ctx.merchants
      .all()
      .map((m) => ({ merchant_id: m.id, notification_url: m.settings.notificationUrl ?? url })),
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

export function registerControl(app: FastifyInstance, ctx: SimContext): void {
  registerActions(app, ctx);
  registerInspection(app, ctx);
  registerSettings(app, ctx);
}
