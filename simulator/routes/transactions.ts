import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SimContext } from '../context.js';
import type { ActionResult, Engine, RefundInput } from '../engine.js';
import { merchantOf } from '../gateway-hooks.js';
import { coreError, sendCore } from '../http.js';
import { grossString, jakartaTime } from '../lib/format.js';
import { asInteger, isObject } from '../lib/validate.js';
import { chargeBody, statusBody } from '../payloads.js';
import type { Txn } from '../state.js';
import { VALIDATION_MESSAGE } from './charge.js';

type Action = 'cancel' | 'expire' | 'approve' | 'deny';
const ACTIONS: readonly Action[] = ['cancel', 'expire', 'approve', 'deny'];

export function notFound(reply: FastifyReply, ctx: SimContext): FastifyReply {
  return sendCore(reply, coreError('404', "Transaction doesn't exist."), ctx.faults);
}

/** Approve and deny answer "200" for the call even though a denied transaction's status is "202". */
function actionBody(r: Extract<ActionResult, { ok: true }>, action: Action): ReturnType<typeof chargeBody> {
  const body = chargeBody(r.txn, r.message);
  delete body.actions;
  if (action === 'approve' || action === 'deny') body.status_code = '200';
  return body;
}

function runAction(engine: Engine, t: Txn, action: Action): ActionResult {
  switch (action) {
    case 'cancel':
      return engine.cancel(t);
    case 'expire':
      return engine.expire(t);
    case 'approve':
      return engine.approve(t);
    case 'deny':
      return engine.deny(t);
  }
}

function parseRefund(body: unknown, errors: string[]): RefundInput {
  const b = isObject(body) ? body : {};
  const out: RefundInput = {};
  if (b.amount !== undefined && b.amount !== null) {
    const n = asInteger(b.amount);
    // A non-integer amount is an amount problem (414), not a payload problem.
    out.amount = n ?? Number.NaN;
  }
  if (b.reason !== undefined) {
    if (typeof b.reason !== 'string' || b.reason.length > 255)
      errors.push('reason must be a string of at most 255 characters');
    else out.reason = b.reason;
  }
  if (b.refund_key !== undefined) {
    if (typeof b.refund_key !== 'string' || !/^[A-Za-z0-9_-]{1,100}$/.test(b.refund_key))
      errors.push('refund_key may only contain alphanumeric characters, - and _');
    else out.refund_key = b.refund_key;
  }
  return out;
}

/**
 * The Core API serves a transaction created through BI-SNAP only when the call says so with
 * `transaction-source: SNAP_API`, and then only for status, cancel and refund (and capture, which
 * this simulator does not offer). Without the header such a transaction is answered as unknown,
 * and expire, approve and deny answer so always: the gateway documents neither case's answer, so
 * both are this simulator's choice, not observed behaviour.
 */
function servedHere(req: FastifyRequest, t: Txn, documented: boolean): boolean {
  if (t.source.kind !== 'snap_api') return true;
  return documented && req.headers['transaction-source'] === 'SNAP_API';
}

export function registerTransactionRoutes(scope: FastifyInstance, ctx: SimContext): void {
  const status = async (
    req: FastifyRequest<{ Params: { id: string } }>,
    reply: FastifyReply,
  ): Promise<FastifyReply> => {
    const m = merchantOf(req);
    const t = m.ledger.findTxn(req.params.id);
    if (!t || !servedHere(req, t, true)) return notFound(reply, ctx);
    return sendCore(reply, statusBody(t, m.serverKey), ctx.faults);
  };
  scope.get<{ Params: { id: string } }>('/v2/:id/status', status);
  scope.get<{ Params: { id: string } }>('/v2/:id/status/b2b', status);

  for (const action of ACTIONS) {
    scope.post<{ Params: { id: string } }>(`/v2/:id/${action}`, async (req, reply) => {
      const { engine, ledger } = merchantOf(req);
      const t = ledger.findTxn(req.params.id);
      if (!t || !servedHere(req, t, action === 'cancel')) return notFound(reply, ctx);
      const r = runAction(engine, t, action);
      if (!r.ok) return sendCore(reply, coreError(r.code, r.message), ctx.faults);
      return sendCore(reply, actionBody(r, action), ctx.faults);
    });
  }

  const refund = async (
    req: FastifyRequest<{ Params: { id: string } }>,
    reply: FastifyReply,
  ): Promise<FastifyReply> => {
    const { engine, ledger } = merchantOf(req);
    const t = ledger.findTxn(req.params.id);
    if (!t || !servedHere(req, t, true)) return notFound(reply, ctx);
    const errors: string[] = [];
    const input = parseRefund(req.body, errors);
    if (errors.length > 0)
      return sendCore(reply, coreError('400', VALIDATION_MESSAGE, { validation_messages: errors }), ctx.faults);
    const r = engine.refund(t, input);
    if (!r.ok) return sendCore(reply, coreError(r.code, r.message), ctx.faults);
    return sendCore(
      reply,
      {
        status_code: '200',
        status_message: r.message,
        transaction_id: t.transaction_id,
        order_id: t.order_id,
        gross_amount: grossString(t.gross_amount),
        currency: 'IDR',
        payment_type: t.payment_type,
        transaction_time: jakartaTime(t.transaction_time),
        transaction_status: t.status,
        refund_chargeback_id: r.refund.refund_chargeback_id,
        refund_amount: grossString(r.refund.refund_amount),
        refund_key: r.refund.refund_key ?? String(r.refund.refund_chargeback_id),
      },
      ctx.faults,
    );
  };
  scope.post<{ Params: { id: string } }>('/v2/:id/refund', refund);
  scope.post<{ Params: { id: string } }>('/v2/:id/refund/online/direct', refund);
}
