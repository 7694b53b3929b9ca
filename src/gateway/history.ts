/**
 * The gateway's own record of an account's payments, read through its API: each payment as a
 * report row (the shape an imported report's rows have), so reconciliation matches both alike.
 */
import type { ReportRow } from '../model/reconciliation.js';

/** One payment of the history in detail: its row, and the promo and refunds the gateway holds for it. */
export interface HistoryDetail {
  row: ReportRow;
  /** When the gateway last changed the transaction (ISO 8601 with offset), when it says. */
  updatedTime: string | null;
  promo: { code: string | null; originalAmount: number; discountAmount: number } | null;
  refunds: Array<{ amount: number; time: string | null }>;
}

export interface TransactionHistory {
  /** True when the account has BI-SNAP credentials, so its history can be read. */
  configured(): Promise<boolean>;
  /**
   * Every payment the gateway lists as paid between `from` and `to` (inclusive), page after page;
   * rejects (GatewayError) on any refusal or failure, or when the listing runs past its page bound,
   * so a caller never sees part of a day as the whole of it.
   */
  list(from: Date, to: Date): Promise<ReportRow[]>;
  /** One payment by its gateway order id (and transaction id, when known); undefined when unknown there. */
  detail(gatewayOrderId: string, transactionId?: string): Promise<HistoryDetail | undefined>;
}

/** Each account's history (its own credentials and connections). */
export interface TransactionHistories {
  for(account: string): TransactionHistory;
}
