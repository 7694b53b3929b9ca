/** Signed gateway notifications for tests (the shape the gateway sends; signature over the exact strings). */
import { randomUUID } from 'node:crypto';
import { midtransSignature } from '../../src/gateway/midtrans/signature.js';

export const TEST_SERVER_KEY = 'SB-Mid-server-simulator';

export interface NotificationInput {
  order_id: string;
  transaction_status: string;
  fraud_status?: string;
  transaction_id?: string;
  gross_amount?: string;
  status_code?: string;
  payment_type?: string;
  settlement_time?: string;
  transaction_time?: string;
  [extra: string]: unknown;
}

const CODES: Record<string, string> = { pending: '201', deny: '202', cancel: '202', expire: '202' };

export function signedNotification(n: NotificationInput, serverKey = TEST_SERVER_KEY): Record<string, unknown> {
  const gross = n.gross_amount ?? '150000.00';
  const code = n.status_code ?? CODES[n.transaction_status] ?? '200';
  const body: Record<string, unknown> = {
    transaction_time: n.transaction_time ?? '2026-11-22 10:00:00',
    transaction_id: n.transaction_id ?? randomUUID(),
    status_message: 'midtrans payment notification',
    status_code: code,
    payment_type: n.payment_type ?? 'bank_transfer',
    merchant_id: 'G123456789',
    currency: 'IDR',
    ...n,
    gross_amount: gross,
  };
  if (n.transaction_status === 'settlement' && n.settlement_time === undefined)
    body.settlement_time = '2026-11-22 10:05:00';
  body.signature_key = midtransSignature(n.order_id, code, gross, serverKey);
  return body;
}
