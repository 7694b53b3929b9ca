/** Reconciliation against the gateway's own record of payments: its report's rows, and what each was found to be. */

/**
 * What one row of the gateway's report was found to be. `missing_at_gateway` rows stand for a
 * payment paylink holds as paid that the report, covering its day, does not list;
 * `transaction_mismatch` rows carry a transaction id paylink holds for another payment than the one
 * the row's order id names (or the row's order id names none); `chargeback` rows are the report's
 * refunds of type chargeback (the customer's bank took the money back), kept apart from refunds so a
 * chargeback is never read as a refund the merchant made nor as a mismatch of one.
 */
export const RECONCILIATION_RESULTS = [
  'matched',
  'missing_here',
  'missing_at_gateway',
  'amount_mismatch',
  'status_mismatch',
  'transaction_mismatch',
  'chargeback',
] as const;
export type ReconciliationResult = (typeof RECONCILIATION_RESULTS)[number];

/**
 * One payment as the gateway reports it, whatever the source (a dashboard export, or the
 * gateway's transaction-history API): the matching sees only this.
 */
export interface ReportRow {
  /** Where it came from: the file's line (1 = the header), or the source's own position. */
  line: number;
  /** The gateway's order id (for a payment link, the purchase's). */
  orderId: string;
  transactionId: string | null;
  /** The gateway's status word as reported (`settlement`, `refund`, …). */
  status: string;
  /** Whole rupiah the gateway reports as the transaction's amount. */
  amount: number;
  /**
   * Whole rupiah, when the report gives either: the other is completed so that fee ≤ amount and
   * net = amount − fee always hold (a report that breaks it is refused).
   */
  fee: number | null;
  net: number | null;
  /** The amount before a promo or an imposed fee, when the report gives it. */
  originalAmount: number | null;
  paymentType: string | null;
  /** ISO 8601 with offset, when the report gives them. */
  transactionTime: string | null;
  settlementTime: string | null;
  /** The withdrawal report's Refund Type: a chargeback or a normal refund; null when the report has no such column or cell. */
  refundType?: 'chargeback' | 'refund' | null;
  /** The withdrawal report's Transaction Split columns (type, sender, receiver), when the merchant splits transactions. */
  split?: { type: string | null; sender: string | null; receiver: string | null } | null;
}

export const RECONCILIATION_SOURCES = ['file', 'history_api'] as const;
export type ReconciliationSource = (typeof RECONCILIATION_SOURCES)[number];

export interface ReconciliationCounts {
  rows: number;
  matched: number;
  missing_here: number;
  missing_at_gateway: number;
  amount_mismatch: number;
  status_mismatch: number;
  transaction_mismatch: number;
  chargeback: number;
}

export interface ReconciliationImport extends ReconciliationCounts {
  id: string;
  /** The account (one MID) whose report it is: its rows are matched with that account's payments only. */
  account: string;
  /** SHA-256 of the file's bytes: the same file again is the same import. */
  fileSha256: string;
  state: 'running' | 'done';
  /**
   * Where its rows came from: `file`, a report uploaded; `history_api`, the gateway's transaction
   * history of one day, read by paylink (its `fileSha256` then stands for the account and day).
   */
  source: ReconciliationSource;
  /** The days (Jakarta) the report covers, `YYYY-MM-DD`, inclusive; null when it named none. */
  coversFrom: string | null;
  coversTo: string | null;
  createdBy: string;
  createdAt: string;
  finishedAt: string | null;
}

export interface ReconciliationRow {
  id: number;
  importId: string;
  /** The report's line; null for a `missing_at_gateway` row (it is not in the report). */
  line: number | null;
  result: ReconciliationResult;
  /** The gateway's order id as reported (or, for missing_at_gateway, paylink's gateway order id). */
  gatewayOrderId: string;
  /** paylink's order id, when the row matched a payment paylink knows. */
  orderId: string | null;
  transactionRef: string | null;
  reportStatus: string | null;
  reportAmount: number | null;
  feeAmount: number | null;
  netAmount: number | null;
  /** What paylink holds: its status and the amount it expects (paid amount, else the order's). */
  paylinkStatus: string | null;
  paylinkAmount: number | null;
  /** In words, what differs. */
  detail: string | null;
}

/**
 * A row as the import stages it. `matchedOn`: what the payment held when the row was found
 * `matched` (its status is `paylinkStatus`); the fee write checks that it still holds, so a payment
 * that changed in between is never given a fee from a verdict about its older state.
 */
export type NewReconciliationRow = Omit<ReconciliationRow, 'id'> & {
  matchedOn?: { nominal: number; paidAmount: number | null };
};
