/**
 * The status machine: the rule that decides whether a gateway report changes a transaction. The
 * gateway's words (`transaction_status`, `fraud_status`, channels) are read by `gateway/status.ts`;
 * this module sees only contract statuses and phases. Pure: no I/O, no clock.
 *
 * Monotonic by rank: pending < challenge < {failed, cancelled, expired} < paid < partially_refunded
 * < {refunded, chargeback}. A report of lower or equal rank than the current status is recorded but
 * never forwarded, so duplicates and out-of-order arrivals (settlement before pending, expire after
 * settlement) cannot move a status backwards. Two deliberate exceptions:
 *  - A NEWER gateway transaction on the same order (the gateway lets an expired order id be used
 *    again, a denied card payment be retried, a payment link be purchased again) replaces an order
 *    that is not paid: it may move expired → pending → paid. Transactions are ordered by their
 *    `transaction_time`; a report from an older one is ignored unless it reports money the order
 *    does not show yet (money is never dropped for arriving late).
 *  - The documented reversals: some channels (`isReversibleChannel` in gateway/status.ts) may turn a settlement into a
 *    deny within minutes ("treat as unpaid"): paid → failed, only for those channels and only from
 *    settled; a captured card payment may be voided before it settles: paid → cancelled, only
 *    from captured. Both only on the same gateway transaction; after a cancel nothing of that
 *    transaction is applied any more. Everything else after paid is refund/chargeback only.
 */
import type { PaymentStatus } from '../../model/payment.js';
import { gatewayPhase, statusVerdict, type GatewayPhase } from '../../gateway/status.js';

/** The contract statuses, as the store checks them when read. */
export { PAYMENT_STATUSES } from '../../model/payment.js';

const RANK: Record<PaymentStatus, number> = {
  pending: 0,
  challenge: 1,
  failed: 2,
  cancelled: 2,
  expired: 2,
  paid: 3,
  partially_refunded: 4,
  refunded: 5,
  chargeback: 5,
};

export function statusRank(s: PaymentStatus): number {
  return RANK[s];
}

export interface CurrentState {
  status: PaymentStatus;
  /** The gateway's `transaction_status` last applied (its phase is read by `gatewayPhase`). */
  transactionStatus: string | null;
  gatewayTransactionId: string | null;
  /** When the current gateway transaction was created (any ISO 8601 form), if known. */
  transactionTime: string | null;
}

export interface IncomingReport {
  transactionStatus: string | null;
  fraudStatus: string | null;
  transactionId: string | null;
  /** When the reporting gateway transaction was created (ISO 8601), if known. */
  transactionTime: string | null;
  /** The incoming gateway transaction was current on this order before and has since been replaced (used when times are missing). */
  superseded: boolean;
  /** The channel may reverse a settlement (see `isReversibleChannel`). */
  reversible: boolean;
}

export type Decision =
  /** Forward: the status changes and the ERP gets an event. */
  | { kind: 'apply'; status: PaymentStatus; newTransaction: boolean }
  /** Same status again; `adoptTransaction` when it came from another gateway transaction that now becomes current. */
  | { kind: 'duplicate'; status: PaymentStatus; adoptTransaction: boolean }
  /** Would move backwards (or sideways between terminal statuses): recorded, not forwarded. */
  | { kind: 'stale'; status: PaymentStatus }
  | { kind: 'unknown_status' };

const PAID_RANK = RANK.paid;

/** -1: the incoming gateway transaction is older than the current one; 1: newer; 0: unknown. */
function age(current: CurrentState, incoming: IncomingReport): -1 | 0 | 1 {
  const a = incoming.transactionTime ? Date.parse(incoming.transactionTime) : NaN;
  const b = current.transactionTime ? Date.parse(current.transactionTime) : NaN;
  if (Number.isNaN(a) || Number.isNaN(b) || a === b) return 0;
  return a < b ? -1 : 1;
}

export function decideTransition(current: CurrentState, incoming: IncomingReport): Decision {
  const verdict = statusVerdict(incoming.transactionStatus, incoming.fraudStatus);
  const next = verdict.status;
  if (next === undefined) return { kind: 'unknown_status' };
  const otherTx =
    current.gatewayTransactionId !== null &&
    incoming.transactionId !== null &&
    incoming.transactionId !== current.gatewayTransactionId;
  if (otherTx) return decideOtherTransaction(current, incoming, next);
  if (next === current.status) return { kind: 'duplicate', status: next, adoptTransaction: false };
  if (isReversal(current, incoming, { status: next, phase: verdict.phase }))
    return { kind: 'apply', status: next, newTransaction: false };
  // The gateway voids only before settlement and nothing follows a void: any other report of the
  // same gateway transaction arriving after it is an older fact that came late.
  if (gatewayPhase(current.transactionStatus) === 'voided') return { kind: 'stale', status: next };
  if (statusRank(next) > statusRank(current.status)) return { kind: 'apply', status: next, newTransaction: false };
  return { kind: 'stale', status: next };
}

/**
 * A report from another gateway transaction of the same order. An older one is ignored unless it
 * reports money (paid or beyond) that the order does not show yet; a newer one replaces an order
 * that is not paid (the gateway only accepts a new transaction once the previous one ended).
 */
function decideOtherTransaction(current: CurrentState, incoming: IncomingReport, next: PaymentStatus): Decision {
  const a = age(current, incoming);
  const older = a < 0 || (a === 0 && incoming.superseded);
  const higher = statusRank(next) > statusRank(current.status);
  if (older)
    return statusRank(next) >= PAID_RANK && higher
      ? { kind: 'apply', status: next, newTransaction: true }
      : { kind: 'stale', status: next };
  if (next === current.status) return { kind: 'duplicate', status: next, adoptTransaction: true };
  if (statusRank(current.status) < PAID_RANK || higher) return { kind: 'apply', status: next, newTransaction: true };
  return { kind: 'stale', status: next };
}

function isReversal(
  current: CurrentState,
  incoming: IncomingReport,
  next: { status: PaymentStatus; phase: GatewayPhase },
): boolean {
  if (current.status !== 'paid') return false;
  const was = gatewayPhase(current.transactionStatus);
  // A captured card payment is voided until it settles: the money was never taken.
  if (was === 'captured' && next.status === 'cancelled' && next.phase === 'voided') return true;
  return incoming.reversible && was === 'settled' && next.status === 'failed' && next.phase === 'denied';
}
