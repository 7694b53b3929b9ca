/**
 * BI-SNAP signatures as the gateway computes them. The simulator
 * keeps its own copy (it shares no code with paylink): the token request verified with the
 * merchant's RSA public key, transactional requests with HMAC-SHA512 under the client secret, and
 * its notifications signed with its own RSA private key.
 */
import {
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  createSign,
  createVerify,
  generateKeyPairSync,
  timingSafeEqual,
  type KeyObject,
} from 'node:crypto';
import { readFileSync } from 'node:fs';

export function sha256Hex(body: string): string {
  return createHash('sha256').update(body, 'utf8').digest('hex');
}

export function verifyRsa(data: string, signature: string, key: KeyObject): boolean {
  if (!/^[A-Za-z0-9+/]{1,2048}={0,2}$/.test(signature)) return false;
  try {
    return createVerify('RSA-SHA256').update(data, 'utf8').verify(key, signature, 'base64');
  } catch {
    return false;
  }
}

export function signRsa(data: string, key: KeyObject): string {
  return createSign('RSA-SHA256').update(data, 'utf8').sign(key, 'base64');
}

export function hmacSignature(
  method: string,
  path: string,
  token: string,
  body: string,
  timestamp: string,
  secret: string,
): string {
  const stringToSign = `${method.toUpperCase()}:${path}:${token}:${sha256Hex(body)}:${timestamp}`;
  return createHmac('sha512', secret).update(stringToSign, 'utf8').digest('base64');
}

export function sameSecret(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** A key variable holds the PEM text or the path of a file holding it. */
export function pemText(value: string): string {
  return value.trimStart().startsWith('-----BEGIN') ? value : readFileSync(value, 'utf8');
}

export function publicKeyOf(pem: string): KeyObject {
  return createPublicKey({ key: pemText(pem), format: 'pem' });
}

/** The simulator's own signing key: the one given, or a fresh 2048-bit pair. */
export function signingKey(pem: string | undefined): { privateKey: KeyObject; publicKeyPem: string } {
  const privateKey = pem
    ? createPrivateKey({ key: pemText(pem), format: 'pem' })
    : generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const publicKeyPem = createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();
  return { privateKey, publicKeyPem };
}
