import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { VERSION } from '../../src/platform/version.js';
import { basicAuth } from '../helpers/services.js';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import { formState } from '../helpers/console-forms.js';
import { STRONG_PRODUCTION_SECRETS } from '../helpers/strong-secrets.js';

const SERVER_KEY = 'SB-Mid-server-cfgtest-0001-abcd';
const isChange = (l: Record<string, unknown>) =>
  typeof l.audit === 'object' && l.audit !== null && 'action' in l.audit && l.audit.action === 'config_change';
const auth = { authorization: basicAuth() };

describe.each(DATABASE_KINDS)('GET/POST /api/config (%s)', (kind) => {
  let ctx: LoggedApp;
  const post = (payload: unknown) =>
    ctx.app.inject({
      method: 'POST',
      url: '/api/config',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: JSON.stringify(payload),
    });
  const get = () => ctx.app.inject({ method: 'GET', url: '/api/config', headers: auth });

  // One app per database; each test starts from no stored overrides (settings uncached for that).
  beforeAll(async () => {
    ctx = await makeLoggedApp(
      kind,
      { MIDTRANS_MODE: 'sandbox', MIDTRANS_SERVER_KEY: SERVER_KEY, ERP_WEBHOOK_SECRET: 'whsec_short' },
      { runtimeConfigCacheMs: 0 },
    );
  });
  beforeEach(async () => {
    await ctx.store.db.deleteFrom('runtime_config').execute();
  });
  afterAll(async () => ctx.close());

  it('shows the effective document with secrets masked and read-only facts under info', async () => {
    const res = await get();
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.gateway).toMatchObject({
      mode: 'sandbox',
      server_key: '****abcd',
      client_key: null,
      api_base_url: 'https://api.sandbox.midtrans.com',
      confirm_notifications: true,
    });
    expect(body.erp).toEqual({ notify_url: null, webhook_secret: '****', timeout_ms: 10_000, retry_for_hours: 72 });
    expect(body.links).toEqual({ default_expiry_minutes: 1440, enabled_payments: [] });
    expect(body.reconcile).toEqual({ interval_s: 300, pending_after_minutes: 60 });
    expect(body.info).toEqual({
      version: VERSION,
      database: kind,
      dev_endpoints: false,
      production: false,
      config_version: 0,
      updated_at: null,
      updated_by: null,
    });
    expect(res.body).not.toContain(SERVER_KEY);
    expect(res.body).not.toContain('whsec_short');
  });

  it('merges a partial update, persists it, applies it at once and audits field names only', async () => {
    const res = await post({
      erp: {
        notify_url: 'https://erp.example.com/hook',
        webhook_secret: 'whsec_new-secret-value-9876',
        timeout_ms: 5000,
      },
      links: { enabled_payments: ['bca_va', 'gopay'] },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.erp).toEqual({
      notify_url: 'https://erp.example.com/hook',
      webhook_secret: '****9876',
      timeout_ms: 5000,
      retry_for_hours: 72,
    });
    expect(body.links.enabled_payments).toEqual(['bca_va', 'gopay']);
    expect(body.info).toMatchObject({ config_version: 1, updated_by: 'ops' });
    const s = await ctx.services.runtimeConfig.current();
    expect(s.erp).toMatchObject({
      notify_url: 'https://erp.example.com/hook',
      webhook_secret: 'whsec_new-secret-value-9876',
      timeout_ms: 5000,
    });
    expect(s.gateway.server_key).toBe(SERVER_KEY);

    const audit = (await ctx.lines()).filter(
      (l) => isChange(l) && l.config_version === 1 && Array.isArray(l.fields) && l.fields.includes('erp.timeout_ms'),
    );
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      audit: { actor: 'operator:ops', action: 'config_change', subject: 'runtime_config', outcome: 'saved' },
      fields: ['erp.notify_url', 'erp.webhook_secret', 'erp.timeout_ms', 'links.enabled_payments'],
    });
    const raw = await ctx.rawLogs();
    expect(raw).not.toContain('whsec_new-secret-value-9876');
    expect(raw).not.toContain('erp.example.com');
  });

  it('keeps the real secret when the masked form is sent back', async () => {
    const masked = (await get()).json().gateway.server_key;
    const res = await post({ gateway: { server_key: masked, client_key: 'SB-Mid-client-cfgtest-0002' } });
    expect(res.statusCode).toBe(200);
    expect((await ctx.services.runtimeConfig.current()).gateway).toMatchObject({
      server_key: SERVER_KEY,
      client_key: 'SB-Mid-client-cfgtest-0002',
    });
    expect(res.json().info.config_version).toBe(1);
  });

  describe('where the server key goes: a change of mode or host needs the key in the same request', () => {
    let gateway: { url: string; authorizations: string[]; close(): Promise<void> };
    beforeAll(async () => {
      const authorizations: string[] = [];
      const server = http.createServer((req, res) => {
        authorizations.push(req.headers.authorization ?? '');
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end('{"status_code":"404","status_message":"Transaction doesn\'t exist."}');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      gateway = {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        authorizations,
        close: () => new Promise<void>((resolve) => server.close(() => resolve())),
      };
    });
    afterAll(async () => gateway.close());

    // Calls go to a closed loopback port unless a change moves them (never to the real gateway).
    const CLOSED = 'http://127.0.0.1:9';
    beforeEach(async () => {
      await ctx.services.runtimeConfig.save({ gateway: { api_base_url: CLOSED, app_base_url: CLOSED } }, 0, 'test');
    });

    it.each([
      ['api_base_url alone', () => ({ gateway: { api_base_url: gateway.url } })],
      ['app_base_url alone', () => ({ gateway: { app_base_url: gateway.url } })],
      [
        'both hosts with the masked key sent back',
        () => ({ gateway: { api_base_url: gateway.url, app_base_url: gateway.url, server_key: '****abcd' } }),
      ],
      [
        'a host with the key reset to the environment (null)',
        () => ({ gateway: { api_base_url: gateway.url, server_key: null } }),
      ],
      ['the mode (which brings its hosts)', () => ({ gateway: { mode: 'production' } })],
    ])('%s → 400 SERVER_KEY_REQUIRED, nothing stored, and the key never reaches that host', async (name, patch) => {
      const before = (await get()).body;
      const res = await post(patch());
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({
        code: 'SERVER_KEY_REQUIRED',
        errors: [{ path: 'gateway.server_key', message: expect.stringMatching(/must be sent again, unmasked/) }],
      });
      expect((await get()).body).toBe(before);
      if (!name.startsWith('the mode')) {
        await ctx.services.gateway.status('SO-KEY-1').catch(() => undefined);
        await ctx.services.gateway
          .createSnap({ gatewayOrderId: 'SO-KEY-1', nominal: 1, enabledPayments: [] }, 'SO-KEY-1')
          .catch(() => undefined);
      }
      expect(gateway.authorizations).toEqual([]);
    });

    it('with the key in the same request the host changes, and that key (only) goes there', async () => {
      const res = await post({ gateway: { api_base_url: gateway.url, server_key: 'SB-Mid-server-new-host-0001' } });
      expect(res.statusCode).toBe(200);
      expect(await ctx.services.gateway.status('SO-KEY-2')).toBeUndefined();
      expect(gateway.authorizations).toEqual([
        `Basic ${Buffer.from('SB-Mid-server-new-host-0001:').toString('base64')}`,
      ]);
      gateway.authorizations.length = 0;
    });

    it('a change that leaves mode and hosts as they are needs no key', async () => {
      const res = await post({
        gateway: { api_base_url: CLOSED, confirm_notifications: true },
        reconcile: { interval_s: 120 },
      });
      expect(res.statusCode).toBe(200);
    });
  });

  it('null removes an override, back to the environment value', async () => {
    await post({ reconcile: { interval_s: 60 } });
    expect((await ctx.services.runtimeConfig.current()).reconcile.interval_s).toBe(60);
    const res = await post({ reconcile: { interval_s: null } });
    expect(res.json().reconcile.interval_s).toBe(300);
  });

  it('a retry window in fractions of an hour, down to 0.01 (36 s), is stored and read back as sent', async () => {
    for (const hours of [0.01, 0.5, 1.25]) {
      const res = await post({ erp: { retry_for_hours: hours } });
      expect(res.statusCode).toBe(200);
      expect(res.json().erp.retry_for_hours).toBe(hours);
      expect((await ctx.services.runtimeConfig.current()).erp.retry_for_hours).toBe(hours);
    }
    await post({ erp: { retry_for_hours: null } });
    expect((await ctx.services.runtimeConfig.current()).erp.retry_for_hours).toBe(72);
  });

  it('null on a secret falls back to the environment secret, never to none', async () => {
    await post({ gateway: { server_key: 'SB-Mid-server-override-00000000' } });
    expect((await ctx.services.runtimeConfig.current()).gateway.server_key).toBe('SB-Mid-server-override-00000000');
    await post({ gateway: { server_key: null } });
    expect((await ctx.services.runtimeConfig.current()).gateway.server_key).toBe(SERVER_KEY);
  });

  it("a mode change brings that mode's gateway hosts unless hosts are given", async () => {
    const res = await post({ gateway: { mode: 'production', server_key: 'Mid-server-cfgtest-production-01' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().gateway).toMatchObject({
      mode: 'production',
      api_base_url: 'https://api.midtrans.com',
      app_base_url: 'https://app.midtrans.com',
    });
  });

  const REJECTED: Array<[string, unknown]> = [
    ['an unknown top-level field', { foo: 1 }],
    ['an unknown nested field', { gateway: { serverKey: 'x' } }],
    ['info', { info: { version: '9' } }],
    ['a read-only flag', { devEndpointsEnabled: true }],
    ['the log directory', { logDir: '/tmp' }],
    ['"true" for a boolean', { gateway: { confirm_notifications: 'true' } }],
    ['a string number', { erp: { timeout_ms: '5000' } }],
    ['a fraction', { erp: { timeout_ms: 50.5 } }],
    ['out of range', { erp: { retry_for_hours: 0 } }],
    ['a retry window under 0.01 h', { erp: { retry_for_hours: 0.005 } }],
    ['a retry window over 720 h', { erp: { retry_for_hours: 720.5 } }],
    ['a section as an array', { erp: [] }],
    ['a non-http URL', { erp: { notify_url: 'ftp://erp.example.com/' } }],
    ['a URL with credentials', { erp: { notify_url: 'https://user:pw@erp.example.com/' } }],
    ['a secret with spaces', { erp: { webhook_secret: 'has spaces' } }],
    ['too many payment methods', { links: { enabled_payments: Array.from({ length: 41 }, (_, i) => `m${i}`) } }],
    ['payment methods the gateway does not offer', { links: { enabled_payments: ['paypal', 'bitcoin'] } }],
    ['an unknown mode', { gateway: { mode: 'live' } }],
    ['simulator mode when not started in it', { gateway: { mode: 'simulator' } }],
    ['a body that is not an object', [1, 2]],
  ];
  it.each(REJECTED)('rejects %s with 400 and changes nothing', async (_name, payload) => {
    const before = (await get()).body;
    const res = await post(payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect((await get()).body).toBe(before);
  });

  it("the console form saves with the API's own action, in one request: one audit line and no request to the API", async () => {
    const { token, cookie } = formState(await ctx.app.inject({ method: 'GET', url: '/console/config', headers: auth }));
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/console/config',
      payload: `_csrf=${encodeURIComponent(token)}&erp.timeout_ms=4321`,
      headers: {
        ...auth,
        cookie,
        'content-type': 'application/x-www-form-urlencoded',
        'x-request-id': 'console-save-1',
      },
    });
    expect(res.statusCode).toBe(303);
    expect((await ctx.services.runtimeConfig.current()).erp.timeout_ms).toBe(4321);
    const lines = (await ctx.lines()).filter((l) => l.request_id === 'console-save-1');
    expect(lines.filter((l) => l.msg === 'request completed')).toHaveLength(1);
    expect(lines.filter(isChange)).toEqual([
      expect.objectContaining({
        audit: { actor: 'operator:ops', action: 'config_change', subject: 'runtime_config', outcome: 'saved' },
        fields: ['erp.timeout_ms'],
      }),
    ]);
  });

  it('rejects prototype pollution attempts with 400', async () => {
    for (const payload of ['{"__proto__":{"x":1}}', '{"gateway":{"constructor":{"prototype":{"x":1}}}}']) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/api/config',
        headers: { ...auth, 'content-type': 'application/json' },
        payload,
      });
      expect(res.statusCode).toBe(400);
    }
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe.each(DATABASE_KINDS)('POST /api/config in production (%s)', (kind) => {
  let ctx: LoggedApp;
  beforeAll(async () => {
    ctx = await makeLoggedApp(
      kind,
      {
        NODE_ENV: 'production',
        log_user: 'ops',
        ...STRONG_PRODUCTION_SECRETS,
        MIDTRANS_MODE: 'sandbox',
        MIDTRANS_SERVER_KEY: SERVER_KEY,
        PUBLIC_BASE_URL: 'https://pay.example.com',
      },
      { runtimeConfigCacheMs: 0 },
    );
  });
  beforeEach(async () => {
    await ctx.store.db.deleteFrom('runtime_config').execute();
  });
  afterAll(async () => ctx.close());

  const PRIVATE = [
    'http://erp.example.com/hook',
    'https://localhost/hook',
    'https://LOCALHOST./hook',
    'https://api.localhost/hook',
    'https://127.0.0.1/hook',
    'https://127.1/hook',
    'https://2130706433/hook',
    'https://0177.0.0.1/hook',
    'https://0x7f000001/hook',
    'https://10.0.0.5/hook',
    'https://172.16.3.4/hook',
    'https://192.168.1.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://0.0.0.0/hook',
    'https://[::1]/hook',
    'https://[::]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::ffff:a00:1]/hook',
    'https://[fc00::1]/hook',
    'https://[fd12:3456::1]/hook',
    'https://[fe80::1]/hook',
    'https://erp@10.0.0.1/hook',
  ];
  it.each(PRIVATE)('refuses the ERP URL %s', async (url) => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/config',
      headers: { authorization: basicAuth(), 'content-type': 'application/json' },
      payload: { erp: { notify_url: url } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].path).toBe('erp.notify_url');
    expect((await ctx.services.runtimeConfig.current()).erp.notify_url).toBeUndefined();
  });

  it('accepts a public https ERP URL', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/config',
      headers: { authorization: basicAuth(), 'content-type': 'application/json' },
      payload: { erp: { notify_url: 'https://203.0.113.10/hook' } },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().info.production).toBe(true);
  });
});
