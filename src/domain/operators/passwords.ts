/**
 * Operator passwords: kept only as a slow, salted hash (`scrypt`), its parameters in the stored
 * string so they can be raised later without invalidating older hashes.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** PCI DSS 8.3.6 asks for 12; a generated one is longer. */
export const MIN_PASSWORD_LENGTH = 12;
/** Cost 2^15, block size 8: about 32 MiB and tens of milliseconds per hash on one core. */
const PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
const MAX_MEMORY = 128 * 1024 * 1024;

function derive(password: string, salt: Buffer, o: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { ...o, maxmem: MAX_MEMORY }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Parameters outside these bounds are refused rather than run: a forged row must not exhaust memory. */
function parse(stored: string): { o: ScryptOptions; salt: Buffer; key: Buffer } | undefined {
  const m = /^scrypt\$(\d{1,8})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9_-]{16,64})\$([A-Za-z0-9_-]{32,128})$/.exec(stored);
  if (!m) return undefined;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (N < 2 ** 10 || N > 2 ** 20 || (N & (N - 1)) !== 0 || r < 1 || r > 16 || p < 1 || p > 4) return undefined;
  return { o: { N, r, p }, salt: Buffer.from(m[4] ?? '', 'base64url'), key: Buffer.from(m[5] ?? '', 'base64url') };
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const h = parse(stored);
  if (!h) return false;
  const key = await derive(password, h.salt, h.o);
  return key.length === h.key.length && timingSafeEqual(key, h.key);
}

/** A hash no password matches, verified for unknown names so they take as long as known ones. */
let decoy: Promise<string> | undefined;
export async function spendVerification(password: string): Promise<void> {
  decoy ??= hashPassword(randomBytes(18).toString('base64url'));
  await verifyPassword(password, await decoy);
}

/** 24 characters from a 64-letter alphabet: 144 bits. */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
