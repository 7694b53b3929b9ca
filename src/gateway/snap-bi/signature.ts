/**
 * BI-SNAP signatures: the access-token request is signed with the
 * merchant's RSA key over `clientId|timestamp`; every transactional request with HMAC-SHA512 under
 * the client secret over `METHOD:path:token:sha256hex(body):timestamp`; the gateway signs its
 * notifications with its RSA key over `POST:path:sha256hex(body):timestamp`.
 */
import { createHash, createHmac, createSign, createVerify, type KeyObject } from 'node:crypto';
import { secretEquals } from '../../platform/secrets.js';

/** Lowercase hex SHA-256 of the exact bytes given (the empty body hashes the empty string). */
export function bodyDigest(body: string | Uint8Array): string {
  return createHash('sha256').update(body).digest('hex');
}

/** Base64 SHA256withRSA (PKCS#1 v1.5) of `clientId|timestamp`: the access-token request's `X-SIGNATURE`. */
export function tokenSignature(clientId: string, timestamp: string, privateKey: KeyObject | string): string {
  return createSign('RSA-SHA256').update(`${clientId}|${timestamp}`, 'utf8').sign(privateKey, 'base64');
}

/** Whether `signature` is the token signature of `clientId|timestamp` under `publicKey`. */
export function verifyTokenSignature(
  clientId: string,
  timestamp: string,
  signature: string,
  publicKey: KeyObject | string,
): boolean {
  return rsaVerify(`${clientId}|${timestamp}`, signature, publicKey);
}

export interface TransactionSigning {
  /** Uppercased before signing. */
  method: string;
  /** The relative path with any query string, no host (e.g. `/v1.0/transfer-va/create-va`). */
  path: string;
  /** Without the `Bearer ` prefix. */
  accessToken: string;
  /** The exact bytes sent; the caller sends the compact serialization it hashed. */
  body: string;
  timestamp: string;
}

/** The string a transactional request's HMAC covers. */
export function transactionStringToSign(t: TransactionSigning): string {
  return `${t.method.toUpperCase()}:${t.path}:${t.accessToken}:${bodyDigest(t.body)}:${t.timestamp}`;
}

/** Base64 HMAC-SHA512 under the client secret: a transactional request's `X-SIGNATURE`. */
export function transactionSignature(t: TransactionSigning, clientSecret: string): string {
  return createHmac('sha512', clientSecret).update(transactionStringToSign(t), 'utf8').digest('base64');
}

/** Constant-time check of a transactional `X-SIGNATURE`. */
export function verifyTransactionSignature(t: TransactionSigning, clientSecret: string, signature: string): boolean {
  return secretEquals(transactionSignature(t, clientSecret), signature);
}

/**
 * The string a notification's RSA signature covers. `rawBody` is hashed as received: the gateway
 * signs the compact body it sends, and a body re-serialised or altered by one byte on the way is
 * not what it signed, so it is refused (the official Node client re-serialises a parsed object
 * instead, which would accept such a body).
 */
export function notificationStringToSign(path: string, rawBody: string | Uint8Array, timestamp: string): string {
  return `POST:${path}:${bodyDigest(rawBody)}:${timestamp}`;
}

/** Base64 SHA256withRSA of a notification (the gateway's side; the simulator keeps its own copy). */
export function notificationSignature(
  path: string,
  rawBody: string | Uint8Array,
  timestamp: string,
  privateKey: KeyObject | string,
): string {
  return createSign('RSA-SHA256')
    .update(notificationStringToSign(path, rawBody, timestamp), 'utf8')
    .sign(privateKey, 'base64');
}

/** Whether a notification's `X-SIGNATURE` is the gateway's RSA signature of the bytes received. */
export function verifyNotificationSignature(
  n: { path: string; rawBody: string | Uint8Array; timestamp: string; signature: string },
  publicKey: KeyObject | string,
): boolean {
  return rsaVerify(notificationStringToSign(n.path, n.rawBody, n.timestamp), n.signature, publicKey);
}

function rsaVerify(data: string, signature: string, publicKey: KeyObject | string): boolean {
  if (!/^[A-Za-z0-9+/]{1,2048}={0,2}$/.test(signature)) return false;
  try {
    return createVerify('RSA-SHA256').update(data, 'utf8').verify(publicKey, signature, 'base64');
  } catch {
    return false;
  }
}
