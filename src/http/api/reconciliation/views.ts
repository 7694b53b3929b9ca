/** What the operator sees of an import of a gateway report and of its rows. */
import type { ReconciliationImport, ReconciliationRow } from '../../../model/reconciliation.js';
import { apiTime, apiTimeOrNull } from '../../../platform/time.js';

/** A finished import with one of each difference: the example the reference shows. */
export const IMPORT_EXAMPLE = {
  id: '0b6f7c1e-5a52-4d0e-9c31-2f1e8a7d6b40',
  rows: 1250,
  matched: 1247,
  missing_here: 1,
  missing_at_gateway: 1,
  amount_mismatch: 1,
  status_mismatch: 0,
  transaction_mismatch: 0,
  chargeback: 0,
  covers_from: '2026-11-20',
  covers_to: '2026-11-22',
  source: 'file' as const,
  file_sha256: '5f1d2c0a9b8e7f6a5d4c3b2a19080706f5e4d3c2b1a09f8e7d6c5b4a39281706',
  created_by: 'operator:ops',
  created_at: '2026-11-23T09:00:00+07:00',
  finished_at: '2026-11-23T09:00:03+07:00',
};

/** `several`: the service has more than one account, so the import names its account. */
export function importView(i: ReconciliationImport, several: boolean) {
  return {
    ...(several ? { account: i.account } : {}),
    id: i.id,
    rows: i.rows,
    matched: i.matched,
    missing_here: i.missing_here,
    missing_at_gateway: i.missing_at_gateway,
    amount_mismatch: i.amount_mismatch,
    status_mismatch: i.status_mismatch,
    transaction_mismatch: i.transaction_mismatch,
    chargeback: i.chargeback,
    covers_from: i.coversFrom,
    covers_to: i.coversTo,
    source: i.source,
    file_sha256: i.fileSha256,
    created_by: i.createdBy,
    created_at: apiTime(i.createdAt),
    finished_at: apiTimeOrNull(i.finishedAt),
  };
}

export function rowView(r: ReconciliationRow) {
  return {
    id: r.id,
    line: r.line,
    result: r.result,
    gateway_order_id: r.gatewayOrderId,
    order_id: r.orderId,
    report_status: r.reportStatus,
    report_amount: r.reportAmount,
    fee_amount: r.feeAmount,
    net_amount: r.netAmount,
    paylink_status: r.paylinkStatus,
    paylink_amount: r.paylinkAmount,
    detail: r.detail,
  };
}
