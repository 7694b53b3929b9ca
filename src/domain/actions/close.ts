/**
 * Cancel and expire at the gateway, for the ERP (API key) and for operators (console). The local
 * status moves only when the gateway's answer or its status API says so, through the same pipeline
 * as notifications.
 */
import type { PaymentStatus, TransactionRecord } from '../../model/payment.js';
import type { AppError } from '../../platform/errors.js';
import { GatewayError } from '../../gateway/port.js';
import { gatewayPhase } from '../../gateway/status.js';
import { answerFor } from '../reports/trust.js';
import type { Actor } from '../audit.js';
import { requireRole } from '../operators/access.js';
import { ingestGatewayReport } from '../reports/ingest.js';
import type { RefreshDeps } from '../reports/refresh.js';
import { closeUnusedLink } from '../orders/links.js';
import { auditAsk, confirm, gatewayTarget, mustFind, stateConflict } from './gateway-action.js';

const MONEY_MOVED: ReadonlySet<PaymentStatus> = new Set(['paid', 'partially_refunded', 'refunded', 'chargeback']);

/** Why a payment cannot be cancelled or expired now; undefined when it can. */
export function closeConflict(tx: TransactionRecord, action: 'cancelled' | 'expired'): AppError | undefined {
  // A challenged payment is the gateway's to judge: it answers with its own refusal where it must.
  if (tx.status === 'pending' || tx.status === 'challenge') return undefined;
  // A captured card payment can still be voided until it settles.
  if (action === 'cancelled' && tx.status === 'paid' && gatewayPhase(tx.transactionStatus) === 'captured')
    return undefined;
  if (MONEY_MOVED.has(tx.status)) return stateConflict('PAYMENT_SETTLED', tx, action);
  return stateConflict('PAYMENT_CLOSED', tx, action);
}

/** Cancels a pending, challenged or captured (not yet settled) payment at the gateway. */
export function cancelPayment(services: RefreshDeps, id: string, actor: Actor): Promise<TransactionRecord> {
  return closePayment(services, id, actor, 'cancelled');
}

/** Expires a pending payment at the gateway now. */
export function expirePayment(services: RefreshDeps, id: string, actor: Actor): Promise<TransactionRecord> {
  return closePayment(services, id, actor, 'expired');
}

async function closePayment(
  services: RefreshDeps,
  id: string,
  actor: Actor,
  action: 'cancelled' | 'expired',
): Promise<TransactionRecord> {
  requireRole(actor, 'finance');
  const tx = await mustFind(services, id, actor);
  // Asking again for what already happened answers with the payment as it is (a retry is harmless).
  if (tx.status === action) return tx;
  const conflict = closeConflict(tx, action);
  if (conflict) throw conflict;
  auditAsk(services, actor, action === 'cancelled' ? 'cancel' : 'expire', tx);
  const target = await gatewayTarget(services, tx);
  if (target === null) return closeUnusedLink(services, tx, action);
  const ref = { carrier: tx.carrier, paymentType: tx.paymentType };
  const res =
    action === 'cancelled' ? await services.gateway.cancel(target, ref) : await services.gateway.expire(target, ref);
  if (res.kind === 'not_found') {
    // A link nobody bought yet has no gateway transaction: the link itself is closed instead.
    if (tx.kind === 'payment_link') return closeUnusedLink(services, tx, action);
    throw GatewayError.refused(res.refusal);
  }
  // The gateway's own answer to the action is as good as its status API when it is about this
  // payment: it goes through the status machine. Otherwise the status API is asked.
  const bound = answerFor(res.answer, tx);
  if (!bound.ok) return confirm(services, tx);
  return (await ingestGatewayReport(services, bound.report, 'status_check', { transaction: tx })).transaction;
}
