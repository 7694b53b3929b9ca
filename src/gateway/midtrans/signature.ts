import { createHash } from 'node:crypto';
import { secretEquals } from '../../platform/secrets.js';

/** Midtrans `signature_key`: lowercase hex SHA-512 of order_id + status_code + gross_amount + server key, over the exact strings. */
export function midtransSignature(orderId: string, statusCode: string, grossAmount: string, serverKey: string): string {
  return createHash('sha512')
    .update(orderId + statusCode + grossAmount + serverKey, 'utf8')
    .digest('hex');
}

/** Constant-time check (see `secretEquals`). */
export function verifyMidtransSignature(
  n: { order_id: string; status_code: string; gross_amount: string; signature_key: string },
  serverKey: string,
): boolean {
  return secretEquals(
    midtransSignature(n.order_id, n.status_code, n.gross_amount, serverKey),
    n.signature_key.toLowerCase(),
  );
}
