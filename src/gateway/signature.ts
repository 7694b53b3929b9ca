import { createHash, timingSafeEqual } from 'node:crypto';

/** Midtrans `signature_key`: lowercase hex SHA-512 of order_id + status_code + gross_amount + server key, over the exact strings. */
export function midtransSignature(orderId: string, statusCode: string, grossAmount: string, serverKey: string): string {
  return createHash('sha512').update(orderId + statusCode + grossAmount + serverKey, 'utf8').digest('hex');
}

/** Constant-time check; digests both sides first so lengths never leak or throw. */
export function verifyMidtransSignature(
  n: { order_id: string; status_code: string; gross_amount: string; signature_key: string },
  serverKey: string,
): boolean {
  const expected = createHash('sha256').update(midtransSignature(n.order_id, n.status_code, n.gross_amount, serverKey)).digest();
  const given = createHash('sha256').update(n.signature_key.toLowerCase()).digest();
  return timingSafeEqual(expected, given);
}

/** Constant-time equality of two secrets of any length. */
export function secretEquals(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}
