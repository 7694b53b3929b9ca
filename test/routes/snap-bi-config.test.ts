/** BI-SNAP settings in the runtime config: write-only secrets, encrypted at rest, field-by-field merge, rules in words. */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth } from '../helpers/services.js';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';

const pair = () =>
  generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
const merchant = pair();
const gateway = pair();
const SECRET = 'snapbi-client-secret-7f3a91c2';
const auth = { authorization: basicAuth() };

describe.each(DATABASE_KINDS)('gateway.snap_bi in /api/config (%s)', (kind) => {
  let ctx: LoggedApp;
  const post = (payload: unknown) =>
    ctx.app.inject({
      method: 'POST',
      url: '/api/config',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: JSON.stringify(payload),
    });
  const get = () => ctx.app.inject({ method: 'GET', url: '/api/config', headers: auth });
  const full = {
    client_id: 'client-1',
    client_secret: SECRET,
    partner_id: 'G123456789',
    channel_id: '12345',
    private_key: merchant.privateKey,
    public_key: gateway.publicKey,
  };

  beforeAll(async () => {
    ctx = await makeLoggedApp(kind, {}, { runtimeConfigCacheMs: 0 });
  });
  beforeEach(async () => {
    await ctx.store.db.deleteFrom('runtime_config').execute();
  });
  afterAll(async () => ctx.close());

  it('defaults to no method through BI-SNAP and no credentials', async () => {
    expect((await get()).json().gateway.snap_bi).toEqual({
      methods: [],
      partner_service_id: '   70012',
      client_secret: null,
      private_key: null,
    });
  });

  it('partner_service_id takes 8 characters, digits left-padded with spaces, and nothing else', async () => {
    for (const bad of ['70012', '123456789', '  12a456', '123456  ']) {
      const res = await post({ gateway: { snap_bi: { partner_service_id: bad } } });
      expect(res.statusCode, bad).toBe(400);
      const paths = (res.json().errors as { path: string }[]).map((e) => e.path);
      expect(paths, bad).toContain('gateway.snap_bi.partner_service_id');
    }
    expect((await ctx.services.runtimeConfig.current()).gateway.snap_bi.partner_service_id).toBe('   70012');
    const ok = await post({ gateway: { snap_bi: { partner_service_id: '  123456' } } });
    expect(ok.statusCode, ok.body).toBe(200);
    expect((await get()).json().gateway.snap_bi.partner_service_id).toBe('  123456');
  });

  it('keeps the secrets write-only and encrypted at rest; a masked value sent back changes nothing', async () => {
    const res = await post({ gateway: { snap_bi: { ...full, methods: ['bank_transfer', 'qris'] } } });
    expect(res.statusCode, res.body).toBe(200);
    const shown = (await get()).json().gateway.snap_bi;
    expect(shown).toMatchObject({
      client_id: 'client-1',
      client_secret: '****91c2',
      partner_id: 'G123456789',
      channel_id: '12345',
      public_key: gateway.publicKey,
      methods: ['bank_transfer', 'qris'],
    });
    expect(shown.private_key).toMatch(/^\*\*\*\*/);
    expect(JSON.stringify(shown)).not.toContain(SECRET);
    expect(JSON.stringify(shown)).not.toContain('PRIVATE KEY');
    const row = await ctx.store.db.selectFrom('runtime_config').selectAll().executeTakeFirstOrThrow();
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(SECRET);
    expect(stored).not.toContain('PRIVATE KEY');
    expect(stored).toContain('client-1');

    const again = await post({ gateway: { snap_bi: { client_secret: shown.client_secret, methods: ['qris'] } } });
    expect(again.statusCode, again.body).toBe(200);
    const effective = await ctx.services.runtimeConfig.current();
    expect(effective.gateway.snap_bi).toMatchObject({ client_secret: SECRET, methods: ['qris'] });
    expect(effective.gateway.snap_bi.private_key).toBe(merchant.privateKey);
  });

  it('refuses methods without credentials, and unusable keys, in words', async () => {
    const res = await post({ gateway: { snap_bi: { methods: ['gopay'] } } });
    expect(res.statusCode).toBe(400);
    const paths = res.json().errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['gateway.snap_bi.client_id', 'gateway.snap_bi.private_key']));
    expect(res.body).toContain('is required while gateway.snap_bi.methods names gopay');

    const swapped = await post({
      gateway: { snap_bi: { private_key: gateway.publicKey, public_key: merchant.privateKey } },
    });
    expect(swapped.statusCode).toBe(400);
    expect(swapped.json().errors).toEqual(
      expect.arrayContaining([
        { path: 'gateway.snap_bi.private_key', message: expect.stringContaining('not a PEM private key') },
        { path: 'gateway.snap_bi.public_key', message: expect.stringContaining('is a private key') },
      ]),
    );
    const bad = await post({ gateway: { snap_bi: { channel_id: '12a', methods: ['card'] } } });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).not.toContain('PRIVATE KEY');
  });

  it('null removes one override; null for snap_bi removes them all', async () => {
    expect((await post({ gateway: { snap_bi: full } })).statusCode).toBe(200);
    expect((await post({ gateway: { snap_bi: { partner_id: null } } })).statusCode).toBe(200);
    let b = (await ctx.services.runtimeConfig.current()).gateway.snap_bi;
    expect(b.partner_id).toBeUndefined();
    expect(b.client_id).toBe('client-1');
    expect((await post({ gateway: { snap_bi: null } })).statusCode).toBe(200);
    b = (await ctx.services.runtimeConfig.current()).gateway.snap_bi;
    expect(b).toEqual({ methods: [], partner_service_id: '   70012' });
  });
});
