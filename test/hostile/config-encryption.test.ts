import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/stores.js';
import { OPERATOR } from '../helpers/services.js';
import { patchRuntimeConfig } from '../helpers/seed.js';
import { ConfigError, loadConfig } from '../../src/config/env.js';
import { startService, type RunningService } from '../../src/server.js';
import { openStore } from '../../src/storage/kysely/store.js';
import { ConfigKeyError, createSecretBox, keyId, parseEncryptionKey } from '../../src/platform/secret-box.js';
import { STRONG } from '../helpers/strong-secrets.js';

const KEY_A = 'a1'.repeat(32);
const KEY_B = Buffer.alloc(32, 7).toString('base64');
const ERP_SECRET = 'whsec_c2VjcmV0LWF0LXJlc3QtMDEyMzQ1Njc4OWFi';
const SERVER_KEY = 'SB-Mid-server-at-rest-4f3e2d1c';

describe('secret box (AES-256-GCM)', () => {
  const a = Buffer.from(KEY_A, 'hex');
  const b = parseEncryptionKey(KEY_B) ?? Buffer.alloc(0);

  it('seals with a fresh IV and opens again; the sealed text names the key id, not the key', () => {
    const box = createSecretBox(a);
    const one = box.encrypt(ERP_SECRET);
    const two = box.encrypt(ERP_SECRET);
    expect(one).not.toBe(two);
    expect(one).toMatch(new RegExp(`^enc:v1:${keyId(a)}:`));
    expect(one).not.toContain(ERP_SECRET);
    expect(one).not.toContain(KEY_A);
    expect(box.decrypt(one)).toBe(ERP_SECRET);
    expect(box.isCurrent(one)).toBe(true);
    expect(box.decrypt('plain-before-encryption')).toBe('plain-before-encryption');
  });

  it('a wrong key is a clear error; damaged data too; a previous key still opens', () => {
    const sealed = createSecretBox(a).encrypt(ERP_SECRET);
    expect(() => createSecretBox(b).decrypt(sealed)).toThrow(ConfigKeyError);
    expect(() => createSecretBox(b).decrypt(sealed)).toThrow(/encrypted with another key/);
    const tampered = `${sealed.slice(0, -4)}AAA=`;
    expect(() => createSecretBox(a).decrypt(tampered)).toThrow(/damaged/);
    const rotated = createSecretBox(b, [a]);
    expect(rotated.decrypt(sealed)).toBe(ERP_SECRET);
    expect(rotated.isCurrent(sealed)).toBe(false);
  });

  it('keys: 64 hex characters or base64 of 32 bytes; production requires one', () => {
    expect(parseEncryptionKey(KEY_A)?.length).toBe(32);
    expect(parseEncryptionKey(KEY_B)?.length).toBe(32);
    for (const bad of ['short', 'z'.repeat(64), Buffer.alloc(16).toString('base64')])
      expect(parseEncryptionKey(bad)).toBeUndefined();
    expect(() => loadConfig({ CONFIG_ENCRYPTION_KEY: 'short' })).toThrow(/CONFIG_ENCRYPTION_KEY must be 32 bytes/);
    expect(() => loadConfig({ CONFIG_ENCRYPTION_KEY_PREVIOUS: `${KEY_A},nope` })).toThrow(
      /CONFIG_ENCRYPTION_KEY_PREVIOUS/,
    );
    const prod = {
      NODE_ENV: 'production',
      log_user: 'ops',
      log_pass: STRONG.operatorPass,
      API_KEYS: STRONG.apiKey,
      MIDTRANS_MODE: 'production',
      MIDTRANS_SERVER_KEY: 'Mid-server-abc',
      PUBLIC_BASE_URL: 'https://pay.example.com',
    };
    expect(() => loadConfig(prod)).toThrow(ConfigError);
    expect(() => loadConfig(prod)).toThrow(/CONFIG_ENCRYPTION_KEY is required in production/);
    expect(loadConfig({ ...prod, CONFIG_ENCRYPTION_KEY: STRONG.configEncryptionKey }).configEncryption.key).toBe(
      STRONG.configEncryptionKey,
    );
  });
});

describe('runtime-config secrets at rest, across restarts', () => {
  let dir: string;
  let running: RunningService | undefined;
  afterEach(async () => {
    await running?.stop();
    running = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const config = (env: Record<string, string> = {}) =>
    loadConfig({
      PORT: '0',
      DATA_DIR: path.join(dir, 'data'),
      LOG_DIR: path.join(dir, 'logs'),
      MIDTRANS_MODE: 'simulator',
      log_user: OPERATOR.user,
      log_pass: OPERATOR.pass,
      ...env,
    });
  const start = async (env: Record<string, string> = {}) => {
    running = await startService(config(env), { stdoutLogs: false });
    return running;
  };
  const stop = async () => {
    await running?.stop();
    running = undefined;
  };
  const storedRow = async () => {
    const store = await openStore(config().database, { logger: pino({ level: 'silent' }) });
    try {
      return await store.config.get();
    } finally {
      await store.close();
    }
  };

  it('secrets set through /api/config are stored encrypted, never in plain text, and read back', async () => {
    dir = tempDir('paylink-enc-');
    const s = await start({ CONFIG_ENCRYPTION_KEY: KEY_A });
    const res = await s.app.inject({
      method: 'POST',
      url: '/api/config',
      headers: { authorization: `Basic ${Buffer.from(`${OPERATOR.user}:${OPERATOR.pass}`).toString('base64')}` },
      payload: { erp: { webhook_secret: ERP_SECRET }, gateway: { client_key: SERVER_KEY } },
    });
    expect(res.statusCode).toBe(200);
    expect((await s.services.runtimeConfig.current()).erp.webhook_secret).toBe(ERP_SECRET);
    await stop();
    const row = await storedRow();
    const text = JSON.stringify(row?.document);
    expect(text).not.toContain(ERP_SECRET);
    expect(text).not.toContain(SERVER_KEY);
    expect(row?.document).toMatchObject({
      erp: { webhook_secret: expect.stringMatching(/^enc:v1:/) },
      gateway: { client_key: expect.stringMatching(/^enc:v1:/) },
    });
    const again = await start({ CONFIG_ENCRYPTION_KEY: KEY_A });
    expect((await again.services.runtimeConfig.current()).erp.webhook_secret).toBe(ERP_SECRET);
  });

  it('a wrong key stops the start with a clear error; the previous key lets a rotation through, then the old key is no longer needed', async () => {
    dir = tempDir('paylink-enc-');
    const s = await start({ CONFIG_ENCRYPTION_KEY: KEY_A });
    await patchRuntimeConfig(s.services.runtimeConfig, { erp: { webhook_secret: ERP_SECRET } });
    await stop();
    await expect(start({ CONFIG_ENCRYPTION_KEY: KEY_B })).rejects.toThrow(
      /encrypted with another key .*CONFIG_ENCRYPTION_KEY_PREVIOUS/,
    );
    const rotated = await start({ CONFIG_ENCRYPTION_KEY: KEY_B, CONFIG_ENCRYPTION_KEY_PREVIOUS: KEY_A });
    expect((await rotated.services.runtimeConfig.current()).erp.webhook_secret).toBe(ERP_SECRET);
    await stop();
    const b = parseEncryptionKey(KEY_B) ?? Buffer.alloc(0);
    expect((await storedRow())?.document).toMatchObject({
      erp: { webhook_secret: expect.stringMatching(new RegExp(`^enc:v1:${keyId(b)}:`)) },
    });
    const after = await start({ CONFIG_ENCRYPTION_KEY: KEY_B });
    expect((await after.services.runtimeConfig.current()).erp.webhook_secret).toBe(ERP_SECRET);
  });

  it('no key configured (outside production): one is generated into DATA_DIR (0600) and kept; plain-text secrets from before are encrypted at start', async () => {
    dir = tempDir('paylink-enc-');
    const store = await openStore(config().database, { logger: pino({ level: 'silent' }) });
    await store.config.put({ erp: { webhook_secret: ERP_SECRET } }, 0, 'before');
    await store.close();
    const s = await start();
    const file = path.join(dir, 'data', 'config-encryption.key');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(parseEncryptionKey(fs.readFileSync(file, 'utf8'))).toBeDefined();
    expect((await s.services.runtimeConfig.current()).erp.webhook_secret).toBe(ERP_SECRET);
    await stop();
    expect(JSON.stringify((await storedRow())?.document)).not.toContain(ERP_SECRET);
    const again = await start();
    expect((await again.services.runtimeConfig.current()).erp.webhook_secret).toBe(ERP_SECRET);
  });
});
