import { createHash, timingSafeEqual } from 'node:crypto';

/** The SHA-512 Midtrans signs with: of order_id + status_code + gross_amount + server key, over the exact strings. */
function signatureDigest(orderId: string, statusCode: string, grossAmount: string, serverKey: string): Buffer {
  return createHash('sha512')
    .update(orderId + statusCode + grossAmount + serverKey, 'utf8')
    .digest();
}

/** Midtrans `signature_key`: the signature's digest in lowercase hex. */
export function midtransSignature(orderId: string, statusCode: string, grossAmount: string, serverKey: string): string {
  return signatureDigest(orderId, statusCode, grossAmount, serverKey).toString('hex');
}

/** 128 hex digits in any case: the only spellings of a SHA-512 that can equal the expected one. */
const SHA512_HEX = /^[0-9a-fA-F]{128}$/;

/**
 * Whether `signature` is the Midtrans signature of the signed fields, in any case. Anything but
 * 128 hex digits is refused without hashing (its length is the sender's, not a secret); otherwise
 * the 64 bytes it spells are compared with the expected digest in constant time
 * (`timingSafeEqual`). The same verdict as comparing the lowercased text with the expected hex,
 * without the two SHA-256 digests `secretEquals` takes to hide a length.
 */
export function signatureVerifies(
  n: { order_id: string; status_code: string; gross_amount: string },
  signature: string,
  serverKey: string,
): boolean {
  if (!SHA512_HEX.test(signature)) return false;
  const expected = signatureDigest(n.order_id, n.status_code, n.gross_amount, serverKey);
  return timingSafeEqual(Buffer.from(signature, 'hex'), expected);
}

/** Constant-time check (see `signatureVerifies`). */
export function verifyMidtransSignature(
  n: { order_id: string; status_code: string; gross_amount: string; signature_key: string },
  serverKey: string,
): boolean {
  return signatureVerifies(n, n.signature_key, serverKey);
}
