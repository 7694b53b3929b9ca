/**
 * Matching one row of the gateway's report with the payment paylink holds. Pure: the rows come from
 * any source (a dashboard export, the gateway's history API), the payment is looked up by the
 * caller.
 *
 * The row's order id decides which payment it is about. A transaction id that paylink holds for
 * another payment contradicts it: a `transaction_mismatch`, whatever else agrees (so a row can
 * never reach a payment through a transaction id alone). Then the amount is compared (it is
 * money), then the status; a row that differs in both is an `amount_mismatch` whose detail names
 * both. The amount paylink expects is what the gateway reported as paid, else the order's own
 * amount; a report's "original amount" (before a promo or an imposed fee) is compared with the
 * order's amount when it is given.
 */
import type { TransactionRecord } from '../../model/payment.js';
import type { ReconciliationResult, ReportRow } from '../../model/reconciliation.js';
import { mapGatewayStatus } from '../../gateway/status.js';

export interface RowVerdict {
  result: Exclude<ReconciliationResult, 'missing_at_gateway'>;
  paylinkStatus: string | null;
  paylinkAmount: number | null;
  detail: string | null;
}

/**
 * `tx`: the payment the row's order id names; `holder`: the payment paylink holds the row's
 * transaction id for, when it is another one.
 */
export function matchRow(row: ReportRow, tx: TransactionRecord | undefined, holder?: TransactionRecord): RowVerdict {
  if (holder && holder.id !== tx?.id) return transactionMismatch(row, tx, holder);
  if (row.refundType === 'chargeback') return chargebackRow(row, tx);
  if (!tx)
    return {
      result: 'missing_here',
      paylinkStatus: null,
      paylinkAmount: null,
      detail: 'paylink holds no payment with this order id',
    };
  const expected = tx.paidAmount ?? tx.nominal;
  const problems: string[] = [];
  // A split transaction's row carries one party's share (sender or receiver), not the whole payment:
  // its amount is no over- or under-payment, so only its status is compared.
  const amountDiffers =
    row.split != null
      ? false
      : row.originalAmount !== null
        ? row.originalAmount !== tx.nominal || (tx.paidAmount !== null && row.amount !== tx.paidAmount)
        : row.amount !== expected;
  if (amountDiffers)
    problems.push(
      `amount: the report says ${row.amount}${row.originalAmount !== null ? ` (original ${row.originalAmount})` : ''}, paylink ${expected}`,
    );
  const reported = mapGatewayStatus(row.status);
  const statusDiffers = reported !== tx.status;
  if (statusDiffers)
    problems.push(
      `status: the report says ${row.status}${reported && reported !== row.status ? ` (${reported})` : ''}, paylink ${tx.status}`,
    );
  const result = amountDiffers ? 'amount_mismatch' : statusDiffers ? 'status_mismatch' : 'matched';
  return {
    result,
    paylinkStatus: tx.status,
    paylinkAmount: expected,
    detail: problems.length > 0 ? problems.join('; ') : null,
  };
}

/**
 * A chargeback row: its own result whatever paylink holds, so it is never read as a refund the
 * merchant made nor as a refund mismatch; the detail says whether paylink already knows of it.
 */
function chargebackRow(row: ReportRow, tx: TransactionRecord | undefined): RowVerdict {
  if (!tx)
    return {
      result: 'chargeback',
      paylinkStatus: null,
      paylinkAmount: null,
      detail: `chargeback of ${row.amount}: paylink holds no payment with this order id`,
    };
  return {
    result: 'chargeback',
    paylinkStatus: tx.status,
    paylinkAmount: tx.paidAmount ?? tx.nominal,
    detail:
      tx.status === 'chargeback'
        ? `chargeback of ${row.amount}: paylink holds the payment as charged back too`
        : `chargeback of ${row.amount}: paylink holds the payment as ${tx.status}; the customer's bank took the money back`,
  };
}

function transactionMismatch(row: ReportRow, tx: TransactionRecord | undefined, holder: TransactionRecord): RowVerdict {
  const about = tx ?? holder;
  const detail = tx
    ? `transaction id: the report says ${row.transactionId ?? ''}, which paylink holds for order ${holder.orderId}, not this one`
    : `paylink holds no payment with this order id; its transaction id ${row.transactionId ?? ''} is paylink's order ${holder.orderId} (gateway order id ${holder.gatewayOrderId})`;
  return {
    result: 'transaction_mismatch',
    paylinkStatus: about.status,
    paylinkAmount: about.paidAmount ?? about.nominal,
    detail,
  };
}
