/**
 * Whether a PEM text is a usable RSA key (BI-SNAP's keys): the merchant's
 * private key must sign with SHA256withRSA (and its own public half verify that signature), the
 * gateway's public key must be an RSA public key of at least 2048 bits. Problems in words; a key's
 * text is never echoed.
 */
import { createPrivateKey, createPublicKey, createSign, createVerify, type KeyObject } from 'node:crypto';

const MIN_BITS = 2048;

function rsaProblem(key: KeyObject): string | undefined {
  if (key.asymmetricKeyType !== 'rsa') return `is a ${key.asymmetricKeyType ?? 'non-RSA'} key, not an RSA key`;
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_BITS) return `is an RSA key of ${bits} bits; at least ${MIN_BITS} are needed`;
  return undefined;
}

/** Undefined when `pem` is an RSA private key that signs and whose public half verifies. */
export function privateKeyProblem(pem: string): string | undefined {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    return 'is not a PEM private key (expected -----BEGIN PRIVATE KEY-----, PKCS#8)';
  }
  const problem = rsaProblem(key);
  if (problem) return problem;
  const probe = 'paylink key check';
  const signature = createSign('RSA-SHA256').update(probe).sign(key);
  const verifies = createVerify('RSA-SHA256').update(probe).verify(createPublicKey(key), signature);
  return verifies ? undefined : 'does not produce signatures its own public key verifies';
}

/** Undefined when `pem` is an RSA public key (a private key is refused: it is not the gateway's to give). */
export function publicKeyProblem(pem: string): string | undefined {
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem))
    return 'is a private key: give the public key (-----BEGIN PUBLIC KEY-----)';
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    return 'is not a PEM public key (expected -----BEGIN PUBLIC KEY-----)';
  }
  return rsaProblem(key);
}
