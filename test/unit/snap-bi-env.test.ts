/** BI-SNAP settings from the environment: PEM text or a file path, problems in words, and check-config's key checks. */
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/env.js';
import { defaultRuntimeConfig } from '../../src/config/runtime.js';
import { checkConfig } from '../../src/cli/check-config.js';
import { configSecretValues } from '../../src/config/env.js';

const keys = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paylink-snapbi-env-'));
const privateFile = path.join(dir, 'merchant.pem');
fs.writeFileSync(privateFile, keys.privateKey);

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
};

describe('MIDTRANS_SNAP_BI_* variables', () => {
  it('take a key as PEM text or as the path of a file; the runtime config defaults to them, with no method', () => {
    const c = loadConfig({
      MIDTRANS_SNAP_BI_CLIENT_ID: 'client-1',
      MIDTRANS_SNAP_BI_CLIENT_SECRET: 'secret-1',
      MIDTRANS_SNAP_BI_PARTNER_ID: 'partner-1',
      MIDTRANS_SNAP_BI_CHANNEL_ID: '95221',
      MIDTRANS_SNAP_BI_PRIVATE_KEY: privateFile,
      MIDTRANS_SNAP_BI_PUBLIC_KEY: keys.publicKey,
      MIDTRANS_SNAP_BI_BASE_URL: 'https://merchants.sbx.midtrans.com/',
    });
    expect(c.gateway.snapBi.privateKey).toBe(keys.privateKey);
    expect(c.gateway.snapBi.publicKey).toBe(keys.publicKey);
    expect(configSecretValues(c)).toEqual(expect.arrayContaining(['secret-1', keys.privateKey]));
    expect(defaultRuntimeConfig(c).gateway.snap_bi).toEqual({
      client_id: 'client-1',
      client_secret: 'secret-1',
      partner_id: 'partner-1',
      channel_id: '95221',
      private_key: keys.privateKey,
      public_key: keys.publicKey,
      base_url: 'https://merchants.sbx.midtrans.com',
      methods: [],
      partner_service_id: '   70012',
    });
  });

  it('name a bad channel id, an unreadable key file, without echoing values', () => {
    const problems = problemsOf({
      MIDTRANS_SNAP_BI_CHANNEL_ID: '12a45',
      MIDTRANS_SNAP_BI_PRIVATE_KEY: path.join(dir, 'missing.pem'),
      MIDTRANS_SNAP_BI_CLIENT_SECRET: 'has space',
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        'MIDTRANS_SNAP_BI_CHANNEL_ID must be 5 digits (the channel id Midtrans issued)',
        expect.stringMatching(
          /^MIDTRANS_SNAP_BI_PRIVATE_KEY must be a PEM key or the path of a file holding one: cannot read .*missing\.pem \(ENOENT\)$/,
        ),
        'MIDTRANS_SNAP_BI_CLIENT_SECRET must be the client secret Midtrans issued, without spaces',
      ]),
    );
    expect(problems.join('\n')).not.toContain('has space');
  });
});

describe('check-config on the BI-SNAP keys', () => {
  it('says when a key does not parse or is the wrong half, and is silent for a usable pair', () => {
    const wrong = checkConfig({
      MIDTRANS_SNAP_BI_PRIVATE_KEY: keys.publicKey,
      MIDTRANS_SNAP_BI_PUBLIC_KEY: keys.privateKey,
    });
    expect(wrong.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^MIDTRANS_SNAP_BI_PRIVATE_KEY is not a PEM private key/),
        expect.stringMatching(/^MIDTRANS_SNAP_BI_PUBLIC_KEY is a private key/),
      ]),
    );
    const garbled = checkConfig({
      MIDTRANS_SNAP_BI_PUBLIC_KEY: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----',
    });
    expect(garbled.problems).toContain(
      'MIDTRANS_SNAP_BI_PUBLIC_KEY is not a PEM public key (expected -----BEGIN PUBLIC KEY-----)',
    );
    const good = checkConfig({
      MIDTRANS_SNAP_BI_PRIVATE_KEY: privateFile,
      MIDTRANS_SNAP_BI_PUBLIC_KEY: keys.publicKey,
    });
    expect(good.problems.filter((p) => p.includes('SNAP_BI'))).toEqual([]);
  });
});
