import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth, makeTestApp, type TestContext } from '../helpers/services.js';
import { newTransaction } from '../helpers/seed.js';

const DEFAULT_KEY = 'SB-Mid-server-default-0001-abcd';
const B_KEY = 'SB-Mid-server-account-b-0002-wxyz';
const auth = { authorization: basicAuth() };

describe.each(DATABASE_KINDS)('/api/accounts (%s)', (kind) => {
  let ctx: TestContext;
  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
    ctx.app.inject({
      method,
      url,
      headers: { ...auth, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    });
  beforeAll(async () => {
    ctx = await makeTestApp(
      kind,
      { MIDTRANS_MODE: 'sandbox', MIDTRANS_SERVER_KEY: DEFAULT_KEY, API_KEYS: 'env-key-0123456789abcdef' },
      { runtimeConfigCacheMs: 0 },
    );
  });
  afterAll(async () => ctx.close());

  it('creates an account with its own configuration; /api/config stays default', async () => {
    const before = (await call('GET', '/api/config')).json();
    expect((await call('GET', '/api/accounts')).json()).toMatchObject({
      data: [{ id: 'default', merchant_id: null, mode: 'sandbox', disabled: false }],
    });
    const created = await call('POST', '/api/accounts', {
      id: 'toko-b',
      name: 'Toko B',
      config: {
        gateway: { mode: 'sandbox', server_key: B_KEY, merchant_id: 'G000000002' },
        erp: { notify_url: 'https://erp-b.example.com/events', webhook_secret: 'whsec_account_b_secret' },
      },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ id: 'toko-b', name: 'Toko B', merchant_id: 'G000000002', disabled: false });
    const cfg = (await call('GET', '/api/accounts/toko-b/config')).json();
    expect(cfg.gateway).toMatchObject({ merchant_id: 'G000000002', server_key: '****wxyz' });
    expect(cfg.erp).toMatchObject({ notify_url: 'https://erp-b.example.com/events', webhook_secret: '****cret' });
    expect(JSON.stringify(cfg)).not.toContain(B_KEY);
    // The default account's document is as before: its key, no MID, no ERP endpoint of B's.
    expect((await call('GET', '/api/config')).json()).toEqual(before);
    expect((await call('GET', '/api/accounts/default/config')).json().gateway.server_key).toBe('****abcd');

    const changed = await call('POST', '/api/accounts/toko-b/config', { gateway: { merchant_id: 'G000000003' } });
    expect(changed.statusCode).toBe(200);
    expect(changed.json().gateway.merchant_id).toBe('G000000003');
    expect((await call('GET', '/api/accounts')).json().data[1]).toMatchObject({
      id: 'toko-b',
      merchant_id: 'G000000003',
    });
  });

  it('refuses an existing id, a bad id, a config that would not work, unknown accounts and default disabling', async () => {
    await call('POST', '/api/accounts', { id: 'dup', config: { gateway: { server_key: B_KEY } } });
    const again = await call('POST', '/api/accounts', { id: 'dup', config: {} });
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('ACCOUNT_EXISTS');
    for (const id of ['Upper', '-lead', 'a'.repeat(33), 'has space'])
      expect((await call('POST', '/api/accounts', { id, config: {} })).statusCode).toBe(400);
    // Sandbox without a server key cannot work: nothing is created.
    const unusable = await call('POST', '/api/accounts', { id: 'no-key', config: { gateway: { mode: 'sandbox' } } });
    expect(unusable.statusCode).toBe(400);
    expect(unusable.json().errors).toEqual([expect.objectContaining({ path: 'config.gateway.server_key' })]);
    expect((await call('GET', '/api/accounts/no-key/config')).statusCode).toBe(404);
    expect((await call('POST', '/api/accounts', { id: 'x', config: { nope: 1 } })).statusCode).toBe(400);
    const def = await call('DELETE', '/api/accounts/default');
    expect(def.statusCode).toBe(409);
    expect(def.json().code).toBe('ACCOUNT_DEFAULT');
    expect((await call('DELETE', '/api/accounts/nobody')).statusCode).toBe(404);
    expect((await ctx.app.inject({ method: 'GET', url: '/api/accounts' })).statusCode).toBe(401);
  });

  it('API keys: shown once, listed without the key, revoked; disabling an account', async () => {
    await call('POST', '/api/accounts', { id: 'keys', config: { gateway: { server_key: B_KEY } } });
    const made = await call('POST', '/api/accounts/keys/api-keys', { label: 'ERP' });
    expect(made.statusCode).toBe(201);
    const k = made.json();
    expect(k.key).toMatch(/^pl_[A-Za-z0-9_-]{43}$/);
    const listed = await call('GET', '/api/accounts/keys/api-keys');
    expect(listed.json()).toEqual({
      data: [{ key_id: k.key_id, label: 'ERP', created_at: k.created_at, last_used_at: null }],
    });
    expect(listed.body).not.toContain(k.key);
    expect((await call('POST', '/api/accounts/keys/api-keys')).statusCode).toBe(201);
    expect((await call('DELETE', `/api/accounts/keys/api-keys/${k.key_id}`)).statusCode).toBe(204);
    expect((await call('DELETE', `/api/accounts/keys/api-keys/${k.key_id}`)).statusCode).toBe(404);
    expect((await call('DELETE', `/api/accounts/default/api-keys/${k.key_id}`)).statusCode).toBe(404);
    expect((await call('GET', '/api/accounts/keys/api-keys')).json().data).toHaveLength(1);
    const off = await call('DELETE', '/api/accounts/keys');
    expect(off.statusCode).toBe(200);
    expect(off.json()).toMatchObject({ id: 'keys', disabled: true });
  });

  it("the operator list and export name each row's account and filter by it", async () => {
    await ctx.store.transactions.insert(newTransaction({ orderId: 'LIST-1' }));
    await ctx.store.forAccount('toko-b').transactions.insert(newTransaction({ orderId: 'LIST-1' }));
    const all = (await call('GET', '/api/transactions')).json().items as Array<{ account: string; order_id: string }>;
    expect(
      all
        .filter((t) => t.order_id === 'LIST-1')
        .map((t) => t.account)
        .sort(),
    ).toEqual(['default', 'toko-b']);
    const onlyB = (await call('GET', '/api/transactions?account=toko-b')).json().items;
    expect(onlyB).toEqual([expect.objectContaining({ account: 'toko-b', order_id: 'LIST-1' })]);
    expect((await call('GET', '/api/transactions?account=Bad_Id')).statusCode).toBe(400);
    const csv = (await call('GET', '/api/transactions/export?format=csv&account=toko-b')).body.split('\r\n');
    expect(csv[0]).toMatch(/^\uFEFFaccount,order_id,/);
    expect(csv[1]).toMatch(/^toko-b,LIST-1,/);
  });
});
