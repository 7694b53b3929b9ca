import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LookupAddress } from 'node:dns';
import { basicAuth, makeTestApp, type TestContext } from '../helpers/services.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { seedTransaction } from '../helpers/seed.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { ingestGatewayReport } from '../../src/domain/notifications.js';
import { createOutbox } from '../../src/outbox/worker.js';
import { literalRefusal } from '../../src/erp/guard.js';

const op = { authorization: basicAuth() };
const CONTROL = ['\r\n', '\n', '\t', '\u0001', '\u007f', '\u0085'];
const METADATA = [
  'http://169.254.169.254/latest/meta-data/',
  'http://169.254.170.2/v2/credentials',
  'http://[fe80::1]/',
  'http://[::ffff:169.254.169.254]/',
  'http://[fd00:ec2::254]/',
  'http://100.100.100.200/latest/meta-data',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://METADATA.GOOGLE.INTERNAL./',
  'http://2852039166/',
];

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  return '';
}

describe('configured URLs: no control characters, never link-local or metadata (any mode)', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await makeTestApp('sqlite', {}, { simulatorBaseUrl: 'http://127.0.0.1:9', settingsCacheMs: 0 });
  });
  afterAll(async () => ctx.close());
  const post = (payload: unknown) => ctx.app.inject({ method: 'POST', url: '/api/config', headers: op, payload: payload as object });

  it.each(CONTROL.map((c) => [JSON.stringify(c), c]))('/api/config: a URL with %s → 400', async (_name, c) => {
    for (const [section, field] of [['erp', 'notify_url'], ['gateway', 'api_base_url'], ['gateway', 'app_base_url']] as const) {
      const res = await post({ [section]: { [field]: `http://127.0.0.1:8080/hook${c}X-Injected: 1` } });
      expect(res.statusCode, `${section}.${field}`).toBe(400);
      expect(res.json().errors).toContainEqual({ path: `${section}.${field}`, message: 'must not contain control characters' });
    }
  });

  it.each(METADATA)('/api/config: notify_url %s → 400 outside production too', async (url) => {
    const res = await post({ erp: { notify_url: url } });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toContainEqual({ path: 'erp.notify_url', message: 'must not point to a link-local or cloud metadata address' });
  });

  it('loopback and private addresses stay allowed outside production', async () => {
    for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost:8080/hook', 'http://10.0.0.5/hook']) {
      const res = await post({ erp: { notify_url: url } });
      expect(res.statusCode, url).toBe(200);
    }
  });

  it('the environment: control characters and metadata addresses stop the start, naming the variable only', () => {
    expect(configError({ ERP_NOTIFY_URL: 'http://erp.example/a\r\nb' })).toMatch(/ERP_NOTIFY_URL must not contain control characters/);
    expect(configError({ PUBLIC_BASE_URL: 'http://pay.example/\nx' })).toMatch(/PUBLIC_BASE_URL must not contain control characters/);
    expect(configError({ MIDTRANS_API_BASE_URL: 'http://sim.example/\t' })).toMatch(/MIDTRANS_API_BASE_URL must not contain control characters/);
    expect(configError({ ERP_NOTIFY_URL: 'http://169.254.169.254/latest' })).toMatch(/ERP_NOTIFY_URL must not point to a link-local or cloud metadata address/);
    expect(configError({ ERP_NOTIFY_URL: 'http://169.254.169.254/latest' })).not.toContain('169.254');
    expect(configError({ ERP_NOTIFY_URL: 'http://127.0.0.1:8080/hook' })).toBe('');
  });

  it('literal addresses are refused before connecting (undici asks no lookup for them)', () => {
    expect(literalRefusal('http://169.254.169.254/', false)).toBe('link-local');
    expect(literalRefusal('http://[fe80::1]:8080/', false)).toBe('link-local');
    expect(literalRefusal('http://metadata.google.internal/', false)).toBe('link-local');
    expect(literalRefusal('http://127.0.0.1:8080/', false)).toBeUndefined();
    expect(literalRefusal('http://127.0.0.1:8080/', true)).toBe('private');
  });
});

describe('ERP delivery: the resolved address is checked at connect time', () => {
  let ctx: TestContext;
  let erp: ErpReceiver;
  beforeEach(async () => {
    erp = await startErpReceiver({});
    ctx = await makeTestApp('sqlite', {}, { simulatorBaseUrl: 'http://127.0.0.1:9', settingsCacheMs: 0 });
    // Stored directly, as if the name had been re-pointed after the URL was accepted.
    await ctx.services.settings.save({ erp: { notify_url: erp.url.replace('127.0.0.1', 'erp.test'), timeout_ms: 2_000 } }, 0, 'test');
  });
  afterEach(async () => {
    await ctx.close();
    await erp.close();
  });

  async function deliverWith(addresses: string[]) {
    const t = await seedTransaction(ctx.services.store, { orderId: `R-${addresses.length}` });
    const r = await ingestGatewayReport(ctx.services, { order_id: t.gatewayOrderId, status_code: '200', gross_amount: '150000.00', transaction_status: 'settlement', transaction_id: `tx-${t.id}` }, 'webhook');
    const resolved: LookupAddress[] = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    const deps = { store: ctx.services.store, settings: ctx.services.settings, clock: ctx.services.clock, logger: ctx.services.logger, metrics: ctx.services.metrics };
    const outbox = createOutbox(deps, { instanceId: 'dns', resolve: (host, _o, cb) => (host === 'erp.test' ? cb(null, resolved) : cb(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }), [])) });
    try {
      await outbox.runOnce();
    } finally {
      await outbox.stop();
    }
    return ctx.services.store.outbox.findByEventId(r.eventId ?? '');
  }

  it('a name resolving to a metadata address (beside loopback) is refused, 0 deliveries', async () => {
    const e = await deliverWith(['127.0.0.1', '169.254.169.254']);
    expect(e).toMatchObject({ state: 'failed', lastError: 'refused: link-local or metadata address' });
    expect(erp.deliveries).toHaveLength(0);
  });

  it('a name resolving to loopback only is delivered outside production', async () => {
    const e = await deliverWith(['127.0.0.1']);
    expect(e, e?.lastError ?? '').toMatchObject({ state: 'delivered' });
    expect(erp.deliveries).toHaveLength(1);
  });
});
