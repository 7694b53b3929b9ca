/**
 * Which gateway reports may change a payment. A notification's signature covers only `order_id`,
 * `status_code` and `gross_amount`: every other field of a captured notification (transaction_id,
 * statuses, fraud_status, payment type, times, refund amounts, purchase ids) can be edited without
 * breaking it. So paylink acts only on
 *  - the signed fields of a notification, and
 *  - an answer of the gateway's own API (status, charge, cancel, expire) that is about the order
 *    paylink asked about: it names that gateway order id as its `order_id` (for a payment link, one
 *    of the link's purchases `<link>-<suffix>`), or as its `transaction_id` (channels that report
 *    the transaction id in the order id field). Confirming a notification, the answer must also
 *    state the signed amount.
 * An answer about another order, another purchase or another amount is refused with its reason.
 * A `TrustedReport` is made only in this module and the pipeline (`ingestGatewayReport`) applies
 * nothing else, so a new way in cannot skip the rule.
 */
import type { TransactionRecord } from '../../model/payment.js';
import { isReusableLink } from '../orders/records.js';
import {
  grossToNumber,
  isPurchaseOf,
  localExpiryReport,
  reportFromStatus,
  wireAmount,
  type GatewayReport,
} from '../../gateway/report.js';
import type { GatewayAnswer } from '../../gateway/answer.js';
import { withinOpenAmount, type OpenAmount } from '../../gateway/order.js';

declare const trusted: unique symbol;
/** A report paylink may apply: signed, or the gateway's answer about the order asked about. */
export type TrustedReport = GatewayReport & { readonly [trusted]: true };

export type Binding = { ok: true; report: TrustedReport } | { ok: false; reason: string };

const trust = (r: GatewayReport): TrustedReport => r as TrustedReport;

/** Undefined when `answer` is about the gateway order `orderId` (for a link, also one of its purchases); else why not. */
export function notAbout(
  answer: Pick<GatewayAnswer, 'order_id' | 'transaction_id'>,
  orderId: string,
  o: { link?: boolean } = {},
): string | undefined {
  const named = answer.order_id;
  if (named === orderId || answer.transaction_id === orderId) return undefined;
  if (o.link === true && named !== undefined && isPurchaseOf(named, orderId)) return undefined;
  if (named === undefined) return 'the gateway answer names no order';
  return `the gateway answer is about another order (${named.slice(0, 64)})`;
}

/**
 * A notification whose signature verified, taken on its word: its signed fields are facts, the
 * others are believed only with `confirm_notifications` off, which is allowed in simulator mode alone.
 */
export function signedReport(verified: GatewayReport): TrustedReport {
  return trust(verified);
}

/**
 * The status API's answer for a notification's signed order id: applied only when it is about that
 * order and that amount. For a purchase on an open-amount link (`bounds`), the amount is known only
 * from this answer: it must state one, and one within the link's bounds.
 */
export function confirmNotification(answer: GatewayAnswer, signed: GatewayReport, bounds?: OpenAmount): Binding {
  const problem = notAbout(answer, signed.order_id);
  if (problem) return { ok: false, reason: problem };
  if (answer.gross_amount !== undefined && grossToNumber(answer.gross_amount) !== grossToNumber(signed.gross_amount)) {
    return { ok: false, reason: `the gateway answer states another amount (${answer.gross_amount.slice(0, 32)})` };
  }
  if (bounds) {
    const gross = answer.gross_amount === undefined ? undefined : grossToNumber(answer.gross_amount);
    if (gross === undefined)
      return { ok: false, reason: 'the gateway answer states no amount for an open-amount link' };
    if (!withinOpenAmount(gross, bounds))
      return {
        ok: false,
        reason: `the confirmed amount ${gross} is outside the open-amount link's bounds ${bounds.min}–${bounds.max}`,
      };
  }
  return { ok: true, report: trust(reportFromStatus(answer, signed)) };
}

/** An answer to paylink's own question about `tx` (status check, charge, cancel, expire): applied only when it is about `tx`. */
export function answerFor(answer: GatewayAnswer, tx: TransactionRecord): Binding {
  const problem = notAbout(answer, tx.gatewayOrderId, { link: tx.kind === 'payment_link' && !isReusableLink(tx) });
  if (problem) return { ok: false, reason: problem };
  return {
    ok: true,
    report: trust(reportFromStatus(answer, { order_id: tx.gatewayOrderId, gross_amount: wireAmount(tx.nominal) })),
  };
}

/** paylink's own finding: a pending transaction past its expiry that the gateway does not know. */
export function localExpiry(tx: TransactionRecord): TrustedReport {
  return trust(localExpiryReport(tx.gatewayOrderId, tx.nominal, tx.gatewayTransactionId));
}
