/**
 * Matching one row of the gateway's report with the payment paylink holds. Pure: the rows come from
 * any source (a dashboard export, later the gateway's history API), the payment is looked up by the
 * caller.
 *
 * The amount is compared first (it is money), then the status; a row that differs in both is an
 * `amount_mismatch` whose detail names both. The amount paylink expects is what the gateway reported
 * as paid, else the order's own amount; a report's "original amount" (before a promo or an imposed
 * fee) is compared with the order's amount when it is given.
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

export function matchRow(row: ReportRow, tx: TransactionRecord | undefined): RowVerdict {
  if (!tx) return { result: 'missing_here', paylinkStatus: null, paylinkAmount: null, detail: 'paylink holds no payment with this order id' };
  const expected = tx.paidAmount ?? tx.nominal;
  const problems: string[] = [];
  const amountDiffers = row.originalAmount !== null ? row.originalAmount !== tx.nominal || (tx.paidAmount !== null && row.amount !== tx.paidAmount) : row.amount !== expected;
  if (amountDiffers) problems.push(`amount: the report says ${row.amount}${row.originalAmount !== null ? ` (original ${row.originalAmount})` : ''}, paylink ${expected}`);
  const reported = mapGatewayStatus(row.status);
  const statusDiffers = reported !== tx.status;
  if (statusDiffers) problems.push(`status: the report says ${row.status}${reported && reported !== row.status ? ` (${reported})` : ''}, paylink ${tx.status}`);
  const result = amountDiffers ? 'amount_mismatch' : statusDiffers ? 'status_mismatch' : 'matched';
  return { result, paylinkStatus: tx.status, paylinkAmount: expected, detail: problems.length > 0 ? problems.join('; ') : null };
}

/** A payment whose money moved at the gateway: the statuses a settlement report lists. */
export const MONEY_MOVED_STATUSES = ['paid', 'partially_refunded', 'refunded', 'chargeback'] as const;
