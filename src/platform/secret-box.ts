/**
 * Runtime-configuration secrets at rest: AES-256-GCM with a key from the environment
 * (`CONFIG_ENCRYPTION_KEY`). A stored secret is `enc:v1:<key id>:<base64 iv|tag|ciphertext>`; the
 * key id (a hash prefix of the key, not the key) tells a wrong key from damaged data, and lets
 * `CONFIG_ENCRYPTION_KEY_PREVIOUS` keys decrypt during a rotation.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { privateDir, privateFile, writePrivateFile } from './private-files.js';

const PREFIX = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The stored secrets cannot be read with the configured keys: a start-up error, never a silent fallback. */
export class ConfigKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigKeyError';
  }
}

/** 32 bytes as 64 hex characters or as base64 / base64url; undefined for anything else. */
export function parseEncryptionKey(raw: string): Buffer | undefined {
  const t = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) {
    const b = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    return b.length === 32 ? b : undefined;
  }
  return undefined;
}

export const keyId = (key: Buffer): string => createHash('sha256').update(key).digest('hex').slice(0, 12);

export interface SecretBox {
  readonly keyId: string;
  encrypt(plain: string): string;
  /** A value stored before encryption existed (no prefix) is returned as it is. */
  decrypt(stored: string): string;
  /** True when `stored` is encrypted with the current key. */
  isCurrent(stored: string): boolean;
  /**
   * A 32-byte key for another purpose (HKDF-SHA256 of the current key with `purpose` as info):
   * every instance configured with the same key derives the same one, and it reveals nothing of
   * the key it comes from or of keys derived for other purposes.
   */
  derive(purpose: string): Buffer;
}

export function createSecretBox(current: Buffer, previous: Buffer[] = []): SecretBox {
  const id = keyId(current);
  const keys = new Map([current, ...previous].map((k) => [keyId(k), k] as const));
  return {
    keyId: id,
    encrypt(plain) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current, iv);
      cipher.setAAD(Buffer.from(`${PREFIX}${id}`));
      const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `${PREFIX}${id}:${Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64')}`;
    },
    decrypt(stored) {
      if (!stored.startsWith(PREFIX)) return stored;
      const [kid = '', data = ''] = stored.slice(PREFIX.length).split(':');
      const key = keys.get(kid);
      if (!key) {
        throw new ConfigKeyError(
          `runtime-config secrets in the database are encrypted with another key (key id ${kid}; CONFIG_ENCRYPTION_KEY has key id ${id}): set CONFIG_ENCRYPTION_KEY, or CONFIG_ENCRYPTION_KEY_PREVIOUS during a rotation, to the key they were stored with`,
        );
      }
      const buf = Buffer.from(data, 'base64');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, buf.subarray(0, IV_BYTES));
        decipher.setAAD(Buffer.from(`${PREFIX}${kid}`));
        decipher.setAuthTag(buf.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
        return Buffer.concat([decipher.update(buf.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        throw new ConfigKeyError(
          `a runtime-config secret in the database does not decrypt with its key (key id ${kid}): the stored value is damaged`,
        );
      }
    },
    isCurrent: (stored) => stored.startsWith(`${PREFIX}${id}:`),
    derive: (purpose) => Buffer.from(hkdfSync('sha256', current, Buffer.alloc(0), `paylink:${purpose}`, 32)),
  };
}

const FILE = 'config-encryption.key';

/**
 * The keys in force. Configured ones win. Outside production a missing key is generated once and
 * kept in DATA_DIR (owner-only), like the operator credentials, so `npm start` needs no setup;
 * production requires CONFIG_ENCRYPTION_KEY (loadConfig refuses to start without it).
 */
export function resolveEncryptionKeys(config: {
  configEncryption: { key?: string; previous: string[] };
  dataDir: string;
  isProduction: boolean;
}): { current: Buffer; previous: Buffer[]; generated: boolean } {
  const previous = config.configEncryption.previous.map((k) => Buffer.from(k, 'hex'));
  if (config.configEncryption.key)
    return { current: Buffer.from(config.configEncryption.key, 'hex'), previous, generated: false };
  if (config.isProduction) throw new ConfigKeyError('CONFIG_ENCRYPTION_KEY is required in production');
  const file = path.join(config.dataDir, FILE);
  privateDir(config.dataDir);
  privateFile(file);
  const saved = fs.existsSync(file) ? parseEncryptionKey(fs.readFileSync(file, 'utf8')) : undefined;
  if (saved) return { current: saved, previous, generated: true };
  if (fs.existsSync(file)) throw new ConfigKeyError(`${file} does not hold a 32-byte key (64 hex characters)`);
  const key = randomBytes(32);
  writePrivateFile(file, `${key.toString('hex')}\n`);
  return { current: key, previous, generated: true };
}

let processBox: SecretBox | undefined;
/** One random key for the whole process: apps built in process without configured keys (tests, embedding) share it, so they read each other's secrets. */
export function processSecretBox(): SecretBox {
  processBox ??= createSecretBox(randomBytes(32));
  return processBox;
}
