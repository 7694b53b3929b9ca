/**
 * Refund at the gateway, for the ERP (API key) and for operators (console). The local status is
 * never set from the request: it moves only when the gateway's answer or its status API says so,
 * through the same pipeline as notifications, so the ERP hears of each change once and in order
 * through the outbox.
 */
import { randomUUID } from 'node:crypto';
import type { Store } from '../../storage/contract.js';
import type { TransactionRecord } from '../../model/payment.js';
import type { RefundRecord } from '../../model/refund.js';
import { refundableMethod } from '../../gateway/payment-methods.js';
import { AppError } from '../../platform/errors.js';
import { GatewayError, type Answered } from '../../gateway/port.js';
import { refundKeys } from '../../gateway/answer.js';
import { grossToNumber } from '../../gateway/report.js';
import { gatewayPhase } from '../../gateway/status.js';
import { answerFor } from '../reports/trust.js';
import { actorName, type Actor } from '../audit.js';
import { requireRole } from '../operators/access.js';
import { ingestGatewayReport } from '../reports/ingest.js';
import type { RefreshDeps } from '../reports/refresh.js';
import type { RefundInput } from '../orders/schemas.js';
import { auditAsk, confirm, gatewayTarget, mustFind, stateConflict } from './gateway-action.js';
import { closeConflict } from './close.js';

function refundConflict(tx: TransactionRecord): AppError | undefined {
  if (tx.status === 'paid' || tx.status === 'partially_refunded') return methodConflict(tx) ?? settlementConflict(tx);
  if (tx.status === 'refunded' || tx.status === 'chargeback') return stateConflict('PAYMENT_CLOSED', tx, 'refunded');
  return stateConflict('PAYMENT_NOT_PAID', tx, 'refunded');
}

/** A paid payment whose method the gateway does not refund: the refund is made outside the gateway. */
function methodConflict(tx: TransactionRecord): AppError | undefined {
  if (refundableMethod(tx.paymentType)) return undefined;
  const how = tx.paymentType ?? 'an unknown method';
  return new AppError(
    'REFUND_NOT_SUPPORTED',
    `The gateway does not refund payments made by ${how}; refund the payer another way (a bank transfer to them) and record it in the ERP.`,
    { data: { payment_status: tx.status } },
  );
}

/**
 * The gateway refunds only settled payments; a captured card payment is voided by a cancel until it
 * settles (asked anyway, the gateway answers 412 "Merchant cannot modify the status").
 */
function settlementConflict(tx: TransactionRecord): AppError | undefined {
  if (gatewayPhase(tx.transactionStatus) !== 'captured') return undefined;
  return new AppError(
    'PAYMENT_NOT_SETTLED',
    `${tx.orderId} is captured but not settled yet: the gateway refunds it only once settled. Cancel it to void it now, or refund it after settlement.`,
    { data: { payment_status: tx.status } },
  );
}

/** The rupiah a refund asks for (all that is left when no amount is given), checked against what is left. */
export function refundAmount(input: { amount?: number }, nominal: number, left: number): number {
  const amount = input.amount ?? left;
  if (amount <= 0 || amount > left) {
    throw new AppError('AMOUNT_INVALID', `amount must be between 1 and ${left} (what is left of ${nominal}).`, {
      errors: [{ path: 'amount', message: `must be between 1 and ${left}` }],
    });
  }
  return amount;
}

/** How long a request may call the gateway with its refund before another may look at the outcome itself: above the gateway client's timeout. */
export const REFUND_LEASE_MS = 30_000;
/** How long a request waits for another refund of the same payment to finish before answering 409 REFUND_IN_PROGRESS. */
const WAIT_FOR_OTHER_MS = 15_000;
const POLL_MS = 50;

/** What the caller asked for, once: the request key is its Idempotency-Key (with its credential), when it gave one. */
export interface RefundRequest extends RefundInput {
  requestKey?: string;
}

/**
 * Refunds all or part of a paid payment, one refund at a time per payment (across instances). The
 * check "amount ≤ what is left" and the keeping of the request with a new `refund_key` happen in one
 * database transaction under the payment's lock; the gateway is called after it, while the request
 * holds a lease. A request whose outcome stayed unknown (timeout, crash) is resolved from the
 * gateway's list of refunds before another is accepted, so a new request never inherits another's
 * `refund_key` and the gateway is never asked for more than is left. A retry of the same request
 * (same Idempotency-Key) is that refund again: it sends the same key, which the gateway answers with
 * the first refund.
 */
export async function refundPayment(
  services: RefreshDeps,
  id: string,
  input: RefundRequest,
  actor: Actor,
): Promise<TransactionRecord> {
  requireRole(actor, 'finance');
  // The gateway shows the reason with the refund and takes at most 255 characters.
  if (input.reason !== undefined && input.reason.length > 255)
    throw new AppError('VALIDATION_FAILED', 'reason must be at most 255 characters.', {
      errors: [{ path: 'reason', message: 'must be at most 255 characters' }],
    });
  const tx = await mustFind(services, id, actor);
  const own =
    input.requestKey === undefined ? undefined : await services.store.refunds.findByRequestKey(tx.id, input.requestKey);
  if (own && (await retakeOwn(services, tx, own)) === 'answered') return confirm(services, tx);
  const rec = own ?? (await reserveRefund(services, tx, input, actor));
  const target = await gatewayTarget(services, tx);
  if (target === null) {
    await services.store.refunds.settle(rec.id, 'not_made', null);
    throw stateConflict('PAYMENT_NOT_PAID', tx, 'refunded');
  }
  auditAsk(services, actor, 'refund', tx, {
    amount: rec.amount ?? 'rest',
    reason: rec.reason,
    refund_key: rec.refundKey,
    retry_of_same_request: own !== undefined,
  });
  let res: Answered;
  try {
    res = await services.gateway.refund(
      target,
      {
        refundKey: rec.refundKey,
        ...(rec.amount === null ? {} : { amount: rec.amount }),
        ...(rec.reason === null ? {} : { reason: rec.reason }),
      },
      { carrier: tx.carrier, paymentType: tx.paymentType },
    );
    if (res.kind === 'answered') await services.store.refunds.settle(rec.id, 'approved', res.answer.status_code);
  } catch (err) {
    // Outcome unknown: the lease is given up, and the next request asks the gateway what became of it.
    await services.store.refunds.releaseLease(rec.id);
    throw err;
  }
  if (res.kind === 'refused') {
    await services.store.refunds.settle(rec.id, 'refused', res.refusal.code);
    throw GatewayError.refused(res.refusal);
  }
  return confirm(services, tx);
}

/**
 * A retry of the same request: its refund is sent again under the same key (the gateway answers
 * with the first refund) — unless its outcome is known, which is answered again, or another request
 * holds it now.
 */
async function retakeOwn(
  services: RefreshDeps,
  tx: TransactionRecord,
  own: RefundRecord,
): Promise<'send' | 'answered'> {
  const now = services.clock.now();
  if (
    own.state === 'requested' &&
    (await services.store.refunds.claimLease(own.id, now, new Date(now.getTime() + REFUND_LEASE_MS)))
  )
    return 'send';
  const current = (await services.store.refunds.findById(own.id)) ?? own;
  if (current.state === 'approved') return 'answered';
  if (current.state === 'refused')
    throw new AppError('GATEWAY_REFUSED', `The gateway refused this refund (${current.gatewayCode ?? 'no code'}).`, {
      gateway: { status_code: current.gatewayCode ?? '', status_message: 'refund refused' },
    });
  if (current.state === 'not_made')
    throw new AppError(
      'REFUND_NOT_MADE',
      `This refund of ${tx.orderId} was not made: its outcome was unknown and the gateway holds no refund under its key. Send a new request to refund.`,
    );
  throw new AppError(
    'REFUND_IN_PROGRESS',
    `This refund of ${tx.orderId} is being made at the gateway right now; retry when it has finished.`,
    { headers: { 'retry-after': '2' } },
  );
}

type Reservation =
  { kind: 'reserved'; rec: RefundRecord } | { kind: 'busy' } | { kind: 'unresolved'; open: RefundRecord[] };

/** Keeps a new refund request once no other is in flight and what is left allows it; waits for (or resolves) the others first. */
async function reserveRefund(
  services: RefreshDeps,
  tx: TransactionRecord,
  input: RefundRequest,
  actor: Actor,
): Promise<RefundRecord> {
  for (let waited = 0; ;) {
    const step = await services.store.transaction((db) =>
      reserveUnderLock(db, services.clock.now(), tx.id, input, actor),
    );
    if (step.kind === 'reserved') return step.rec;
    if (step.kind === 'unresolved') {
      await resolveOpenRefunds(services, tx, step.open);
      continue;
    }
    if (waited >= WAIT_FOR_OTHER_MS)
      throw new AppError(
        'REFUND_IN_PROGRESS',
        `Another refund of ${tx.orderId} is being made at the gateway; retry when it has finished.`,
        { headers: { 'retry-after': '2' } },
      );
    await new Promise((r) => setTimeout(r, POLL_MS));
    waited += POLL_MS;
  }
}

async function reserveUnderLock(
  db: Store,
  now: Date,
  id: string,
  input: RefundRequest,
  actor: Actor,
): Promise<Reservation> {
  const t = await db.transactions.findForUpdate({ id });
  if (!t) throw new AppError('NOT_FOUND', 'No such payment.');
  const open = await db.refunds.listOpen(t.id);
  if (open.some((r) => r.leaseUntil !== null && Date.parse(r.leaseUntil) > now.getTime())) return { kind: 'busy' };
  if (open.length > 0) return { kind: 'unresolved', open };
  const conflict = refundConflict(t);
  if (conflict) throw conflict;
  const left = t.nominal - Math.max(t.refundedAmount, await db.refunds.getApprovedTotal(t.id));
  if (left <= 0) throw stateConflict('PAYMENT_CLOSED', { ...t, status: 'refunded' }, 'refunded');
  const amount = refundAmount(input, t.nominal, left);
  const rec = await db.refunds.insert({
    id: randomUUID(),
    transactionRef: t.id,
    refundKey: `rf-${randomUUID().replace(/-/g, '')}`,
    amount,
    reason: input.reason ?? null,
    actor: actorName(actor),
    leaseUntil: new Date(now.getTime() + REFUND_LEASE_MS).toISOString(),
    requestKey: input.requestKey ?? null,
  });
  return { kind: 'reserved', rec };
}

/**
 * Requests whose outcome stayed unknown, settled from the gateway's own record: a refund it lists
 * under the request's key was made; one it does not list was not. Where an answer lists no refunds
 * at all, its cumulative refunded amount beyond what is known explains the oldest requests first.
 */
async function resolveOpenRefunds(services: RefreshDeps, tx: TransactionRecord, open: RefundRecord[]): Promise<void> {
  const target = await gatewayTarget(services, tx);
  const st =
    target === null
      ? undefined
      : await services.gateway.status(target, { carrier: tx.carrier, paymentType: tx.paymentType });
  const bound = st ? answerFor(st, tx) : undefined;
  if (st && bound && !bound.ok)
    throw new AppError(
      'GATEWAY_BAD_RESPONSE',
      `The gateway's status answer for ${tx.orderId} is about another order; the earlier refund's outcome cannot be told.`,
    );
  const listed = st?.refunds === undefined ? undefined : refundKeys(st);
  let unexplained =
    (grossToNumber(st?.refund_amount ?? '0') ?? 0) - (await services.store.refunds.getApprovedTotal(tx.id));
  for (const r of open) {
    let made: boolean;
    if (listed) made = listed.has(r.refundKey);
    else {
      made = r.amount !== null && unexplained >= r.amount;
      if (made && r.amount !== null) unexplained -= r.amount;
    }
    // A retry of that same request may have taken it up meanwhile: then it is that request's to settle.
    if (
      !(await services.store.refunds.settleIdle(
        r.id,
        made ? 'approved' : 'not_made',
        st?.status_code ?? null,
        services.clock.now(),
      ))
    )
      continue;
    services.logger.warn(
      { order_id: tx.orderId, refund_key: r.refundKey, outcome: made ? 'approved' : 'not_made' },
      'refund with an unknown outcome resolved from the gateway',
    );
  }
  if (bound?.ok) await ingestGatewayReport(services, bound.report, 'status_check', { transaction: tx });
}

/** Whether a refund can be asked now, or why not: the payment's state, its method, or a card payment not settled yet. */
export type RefundOffer = { ok: true; left: number } | { ok: false; why: 'state' | 'method' | 'unsettled' };

/** The actions that make sense for a payment as it is now (what a person is offered). */
export function availableActions(tx: TransactionRecord): { refund: RefundOffer; cancel: boolean; expire: boolean } {
  const left = tx.nominal - tx.refundedAmount;
  const conflict = refundConflict(tx);
  const refund: RefundOffer =
    conflict?.code === 'REFUND_NOT_SUPPORTED' && left > 0
      ? { ok: false, why: 'method' }
      : conflict?.code === 'PAYMENT_NOT_SETTLED' && left > 0
        ? { ok: false, why: 'unsettled' }
        : conflict !== undefined || left <= 0
          ? { ok: false, why: 'state' }
          : { ok: true, left };
  return { refund, cancel: closeConflict(tx, 'cancelled') === undefined, expire: tx.status === 'pending' };
}
