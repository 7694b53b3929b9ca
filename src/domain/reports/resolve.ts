/**
 * Which transaction a trusted report is about, locked for the rest of the database transaction.
 * Found only by what is signed or confirmed — the report's order id, and the identifiers of a
 * confirmed answer — never by a field a notification carries unsigned. An unknown order is
 * created, named by what the gateway sent.
 */
import { randomUUID } from 'node:crypto';
import type { Store } from '../../storage/contract.js';
import type { TransactionRecord } from '../../model/payment.js';
import { grossToNumber, purchaseBases, type GatewayReport } from '../../gateway/report.js';
import { deriveMercantId } from '../orders/ids.js';
import { isReusableLink, linkOpenAmount } from '../orders/records.js';
import { withinOpenAmount } from '../../gateway/order.js';
import { AppError } from '../../platform/errors.js';
import type { TrustedReport } from './trust.js';

export interface Resolution {
  /** The transaction paylink asked about (a status check, an action's answer): no resolving. */
  transaction?: TransactionRecord;
  /** The signed order id of the notification `truth` confirms, when it is a confirmation. */
  receivedOrderId?: string;
}

export async function lockedTransaction(
  tx: Store,
  truth: TrustedReport,
  by: Resolution,
): Promise<{ t: TransactionRecord; created: boolean }> {
  if (by.transaction) {
    const t = await tx.transactions.findForUpdate({ id: by.transaction.id });
    if (t) return { t, created: false };
  } else {
    // The usual case, the stored mapping, reads and locks in one statement.
    const direct = await tx.transactions.findForUpdate({ gatewayOrderId: truth.order_id });
    if (direct) return { t: direct, created: false };
    // A link's purchases race only with reports about the same purchase: the insert's unique order
    // ids decide, and the loser's transaction is run again (ingest.ts) and finds the row.
    const bases = await baseRows(tx, truth.order_id);
    const first = bases[0];
    if (first?.kind === 'payment_link' && isReusableLink(first)) {
      assertWithinBounds(first, truth);
      return { t: await tx.transactions.insert(purchaseTransaction(first, truth)), created: true };
    }
    const other = await resolveTransaction(tx, truth.order_id, by.receivedOrderId, bases);
    if (other) return { t: (await tx.transactions.findForUpdate({ id: other.id })) ?? other, created: false };
  }
  // A new row is locked by its own insert.
  return { t: await tx.transactions.insert(externalTransaction(truth)), created: true };
}

/**
 * A purchase on an open-amount link is recorded only for an amount within the link's bounds; any
 * other amount throws, so the database transaction writes nothing of it. (Notifications about such
 * purchases are always confirmed and refused before this point: see verify.ts.)
 */
function assertWithinBounds(link: TransactionRecord, report: GatewayReport): void {
  const bounds = linkOpenAmount(link);
  if (bounds === undefined) return;
  const gross = grossToNumber(report.gross_amount);
  if (gross === undefined || !withinOpenAmount(gross, bounds))
    throw new AppError(
      'GATEWAY_BAD_RESPONSE',
      `The gateway reports ${report.gross_amount.slice(0, 32)} for a purchase on the open-amount link ${link.orderId}, outside its bounds ${bounds.min}–${bounds.max}.`,
    );
}

/** The payment link `gatewayOrderId` is a purchase of (`<link gateway id>-<suffix>`), if any. */
export async function purchasedLink(tx: Store, gatewayOrderId: string): Promise<TransactionRecord | undefined> {
  return linkAmong(await baseRows(tx, gatewayOrderId));
}

/**
 * The link a purchase resolves to, of the rows stored under its bases (longest first, absent where
 * none): the longest base stored decides, and only a payment link is one.
 */
export function linkAmong(rows: readonly (TransactionRecord | undefined)[]): TransactionRecord | undefined {
  const first = rows.find((t) => t !== undefined);
  return first?.kind === 'payment_link' ? first : undefined;
}

/**
 * The rows found under `gatewayOrderId`'s possible bases, longest first, up to the first payment
 * link: the first one says whether the id is a purchase on a link used more than once, the last one
 * (when a link) is the link a single-use purchase resolves to. One walk serves both.
 */
async function baseRows(tx: Store, gatewayOrderId: string): Promise<TransactionRecord[]> {
  const rows: TransactionRecord[] = [];
  for (const base of purchaseBases(gatewayOrderId)) {
    const found = await tx.transactions.findByGatewayOrderId(base);
    if (!found) continue;
    rows.push(found);
    if (found.kind === 'payment_link') break;
  }
  return rows;
}

/**
 * One purchase on a link used more than once: a payment of its own, its order id the link's with the
 * gateway's suffix, its mercant_id the link's, its amount what the gateway reports.
 */
function purchaseTransaction(link: TransactionRecord, report: GatewayReport) {
  const suffix = report.order_id.slice(link.gatewayOrderId.length);
  return {
    id: randomUUID(),
    orderId: `${link.orderId}${suffix}`,
    gatewayOrderId: report.order_id,
    mercantId: link.mercantId,
    kind: 'link_purchase' as const,
    attempt: 1,
    nominal: grossToNumber(report.gross_amount) ?? link.nominal,
    status: 'pending' as const,
    paymentUrl: link.paymentUrl,
    paymentLinkId: link.paymentLinkId,
    paymentLinkOrderId: link.orderId,
    snapToken: null,
    requestHash: null,
    requestJson: null,
    gatewayJson: null,
    expireAt: null,
  };
}

/**
 * A purchase on a payment link (`<link gateway id>-<suffix>`) resolves to the link. Some channels
 * report the transaction id in the order id field: a confirmed answer then names the order (found by
 * its mapping), and the signed id is also tried as a gateway transaction id.
 */
async function resolveTransaction(
  tx: Store,
  gatewayOrderId: string,
  signedOrderId: string | undefined,
  bases: readonly TransactionRecord[],
): Promise<TransactionRecord | undefined> {
  const link = bases.at(-1);
  if (link?.kind === 'payment_link') return link;
  if (signedOrderId !== undefined && signedOrderId !== gatewayOrderId) {
    const named = await tx.transactions.findByGatewayOrderId(signedOrderId);
    if (named) return named;
  }
  return tx.transactions.findByGatewayTransactionId(signedOrderId ?? gatewayOrderId);
}

/** An unknown order is accepted and forwarded, named by what the gateway sent. */
function externalTransaction(report: GatewayReport) {
  return {
    id: randomUUID(),
    orderId: report.order_id,
    gatewayOrderId: report.order_id,
    mercantId: deriveMercantId(report.order_id),
    kind: 'external' as const,
    attempt: 1,
    nominal: grossToNumber(report.gross_amount) ?? 0,
    status: 'pending' as const,
    paymentUrl: null,
    paymentLinkId: null,
    snapToken: null,
    requestHash: null,
    requestJson: null,
    gatewayJson: null,
    expireAt: null,
    flags: 'unknown_order',
  };
}
