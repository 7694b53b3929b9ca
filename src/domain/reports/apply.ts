/**
 * What a trusted report changes on its transaction: the status machine's decision over the stored
 * transaction (status-machine.ts), and the patch that carries it out. Reads only; the ingest
 * records the patch (record.ts).
 */
import type { Store } from '../../storage/contract.js';
import type { NotificationResult } from '../../model/notification.js';
import type { PaymentStatus, TransactionPatch, TransactionRecord } from '../../model/payment.js';
import { decideTransition, type Decision } from './status-machine.js';
import { mapGatewayStatus, reportIsReversible } from '../../gateway/status.js';
import { grossToNumber, type GatewayReport } from '../../gateway/report.js';
import { gatewayTimeToIso } from '../../gateway/time.js';

/** The first report of an order we did not know is always forwarded (even `pending`): the ERP learns of it. */
export function firstDecision(truth: GatewayReport): Decision {
  const status = mapGatewayStatus(truth.transaction_status, truth.fraud_status);
  return status ? { kind: 'apply', status, newTransaction: true } : { kind: 'unknown_status' };
}

const REFUND_STATUSES: ReadonlySet<PaymentStatus> = new Set(['refunded', 'partially_refunded']);
/** Statuses at which the customer's money reached the gateway: the amount paid is known from then on. */
const MONEY_STATUSES: ReadonlySet<PaymentStatus> = new Set(['paid', 'partially_refunded', 'refunded', 'chargeback']);

/** The cumulative refunded amount a report states, when it is a refund report that states one. */
function reportedRefund(truth: GatewayReport): number | undefined {
  return truth.refund_amount === undefined ? undefined : grossToNumber(truth.refund_amount);
}

export async function decide(tx: Store, t: TransactionRecord, truth: GatewayReport): Promise<Decision> {
  const d = await decideByStatus(tx, t, truth);
  // A further partial refund keeps the status but raises the cumulative amount: the ERP must hear of it.
  const refunded = reportedRefund(truth);
  if (
    d.kind === 'duplicate' &&
    !d.adoptTransaction &&
    REFUND_STATUSES.has(d.status) &&
    refunded !== undefined &&
    refunded > t.refundedAmount
  ) {
    return { kind: 'apply', status: d.status, newTransaction: false };
  }
  return d;
}

async function decideByStatus(tx: Store, t: TransactionRecord, truth: GatewayReport): Promise<Decision> {
  const incomingTx = truth.transaction_id ?? null;
  const superseded =
    incomingTx !== null && t.gatewayTransactionId !== null && incomingTx !== t.gatewayTransactionId
      ? await tx.notifications.transactionSeen(t.id, incomingTx)
      : false;
  return decideTransition(
    {
      status: t.status,
      transactionStatus: t.transactionStatus,
      gatewayTransactionId: t.gatewayTransactionId,
      transactionTime: t.transactionTime,
    },
    {
      transactionStatus: truth.transaction_status ?? null,
      fraudStatus: truth.fraud_status ?? null,
      transactionId: incomingTx,
      transactionTime: gatewayTimeToIso(truth.transaction_time),
      superseded,
      reversible: reportIsReversible(truth),
    },
  );
}

export function addFlags(current: string | null, add: string[]): string | null {
  const all = new Set([...(current ? current.split(',') : []), ...add].filter((f) => f.length > 0));
  return all.size === 0 ? null : [...all].join(',').slice(0, 1000);
}

function sanitizeFlag(s: string): string {
  return s.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40);
}

export function patchFor(
  d: Decision,
  t: TransactionRecord,
  truth: GatewayReport,
  nowIso: string,
  extraFlags: string[] = [],
): { patch: TransactionPatch; result: NotificationResult } {
  const flags = [...extraFlags];
  if (d.kind === 'unknown_status') {
    flags.push(
      `unknown_status:${sanitizeFlag(truth.transaction_status ?? '(none)')}/${sanitizeFlag(truth.fraud_status ?? '')}`,
    );
    return { patch: { lastEventAt: nowIso, flags: addFlags(t.flags, flags) }, result: 'unknown_status' };
  }
  if (d.kind === 'stale') return { patch: { lastEventAt: nowIso, flags: addFlags(t.flags, flags) }, result: 'stale' };
  if (d.kind === 'duplicate') {
    const patch: TransactionPatch = { lastEventAt: nowIso, flags: addFlags(t.flags, flags) };
    // The first report of a transaction we created (pending link → pending) changes nothing for the ERP but names the gateway transaction.
    if ((d.adoptTransaction || t.gatewayTransactionId === null) && truth.transaction_id) {
      Object.assign(patch, {
        gatewayTransactionId: truth.transaction_id,
        transactionStatus: truth.transaction_status ?? t.transactionStatus,
        paymentType: truth.payment_type ?? t.paymentType,
        transactionTime: gatewayTimeToIso(truth.transaction_time) ?? t.transactionTime,
      });
    }
    return { patch, result: 'duplicate' };
  }
  const gross = grossToNumber(truth.gross_amount);
  const original = truth.original_amount === undefined ? undefined : grossToNumber(truth.original_amount);
  const moneyMoved = MONEY_STATUSES.has(d.status);
  // A customer-imposed fee raises the gross over the order's amount, with the original beside it.
  if (moneyMoved && gross !== undefined && (original ?? gross) !== t.nominal) flags.push('amount_mismatch');
  const sameTx = !d.newTransaction;
  return {
    patch: {
      status: d.status,
      transactionStatus: truth.transaction_status ?? null,
      fraudStatus: truth.fraud_status ?? (sameTx ? t.fraudStatus : null),
      paymentType: truth.payment_type ?? (sameTx ? t.paymentType : null),
      gatewayTransactionId: truth.transaction_id ?? (sameTx ? t.gatewayTransactionId : null),
      transactionTime: gatewayTimeToIso(truth.transaction_time) ?? (sameTx ? t.transactionTime : null),
      settlementTime: gatewayTimeToIso(truth.settlement_time) ?? (sameTx ? t.settlementTime : null),
      statusVersion: t.statusVersion + 1,
      refundedAmount: REFUND_STATUSES.has(d.status)
        ? Math.max(t.refundedAmount, reportedRefund(truth) ?? (d.status === 'refunded' ? t.nominal : 0))
        : t.refundedAmount,
      paidAmount: moneyMoved ? (gross ?? t.paidAmount) : t.paidAmount,
      originalAmount: moneyMoved ? (original ?? t.originalAmount) : t.originalAmount,
      lastEventAt: nowIso,
      gatewayJson: JSON.stringify({ ...truth, signature_key: undefined }),
      flags: addFlags(t.flags, flags),
    },
    result: 'applied',
  };
}
