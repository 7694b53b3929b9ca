/** What the operator sees of an import of a gateway report and of its rows. */
import type { ReconciliationImport, ReconciliationRow } from '../../../model/reconciliation.js';
import { apiTime, apiTimeOrNull } from '../../../platform/time.js';

export function importView(i: ReconciliationImport) {
  return {
    id: i.id,
    rows: i.rows,
    matched: i.matched,
    missing_here: i.missing_here,
    missing_at_gateway: i.missing_at_gateway,
    amount_mismatch: i.amount_mismatch,
    status_mismatch: i.status_mismatch,
    transaction_mismatch: i.transaction_mismatch,
    covers_from: i.coversFrom,
    covers_to: i.coversTo,
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
