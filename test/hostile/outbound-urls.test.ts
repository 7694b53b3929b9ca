import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LookupAddress } from 'node:dns';
import net from 'node:net';
import pino from 'pino';
import { basicAuth, makeTestApp, type TestContext } from '../helpers/services.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { seedTransaction } from '../helpers/seed.js';
import { ConfigError, loadConfig } from '../../src/config/env.js';
import { ingestGatewayReport } from '../../src/domain/reports/ingest.js';
import { signedReport } from '../../src/domain/reports/trust.js';
import { createOutbox } from '../../src/workers/outbox/worker.js';
import { literalRefusal } from '../../src/platform/connect-guard.js';
import { MidtransClient } from '../../src/gateway/midtrans/client.js';
import { GatewayError } from '../../src/gateway/port.js';
import { defaultRuntimeConfig } from '../../src/config/runtime.js';
import { AllowedNetworks, type PrivatePolicy } from '../../src/platform/url-policy.js';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { STRONG } from '../helpers/strong-secrets.js';

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
    ctx = await makeTestApp('sqlite', {}, { simulatorBaseUrl: 'http://127.0.0.1:9', runtimeConfigCacheMs: 0 });
  });
  afterAll(async () => ctx.close());
  const post = (payload: unknown) =>
    ctx.app.inject({ method: 'POST', url: '/api/config', headers: op, payload: payload as object });

  it.each(CONTROL.map((c) => [JSON.stringify(c), c]))('/api/config: a URL with %s → 400', async (_name, c) => {
    for (const [section, field] of [
      ['erp', 'notify_url'],
      ['gateway', 'api_base_url'],
      ['gateway', 'app_base_url'],
    ] as const) {
      const res = await post({ [section]: { [field]: `http://127.0.0.1:8080/hook${c}X-Injected: 1` } });
      expect(res.statusCode, `${section}.${field}`).toBe(400);
      expect(res.json().errors).toContainEqual({
        path: `${section}.${field}`,
        message: 'must not contain control characters',
      });
    }
  });

  it.each(METADATA)('/api/config: notify_url %s → 400 outside production too', async (url) => {
    const res = await post({ erp: { notify_url: url } });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toContainEqual({
      path: 'erp.notify_url',
      message: 'must not point to a link-local or cloud metadata address',
    });
  });

  it('loopback and private addresses stay allowed outside production', async () => {
    for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost:8080/hook', 'http://10.0.0.5/hook']) {
      const res = await post({ erp: { notify_url: url } });
      expect(res.statusCode, url).toBe(200);
    }
  });

  it('the environment: control characters and metadata addresses stop the start, naming the variable only', () => {
    expect(configError({ ERP_NOTIFY_URL: 'http://erp.example/a\r\nb' })).toMatch(
      /ERP_NOTIFY_URL must not contain control characters/,
    );
    expect(configError({ PUBLIC_BASE_URL: 'http://pay.example/\nx' })).toMatch(
      /PUBLIC_BASE_URL must not contain control characters/,
    );
    expect(configError({ MIDTRANS_API_BASE_URL: 'http://sim.example/\t' })).toMatch(
      /MIDTRANS_API_BASE_URL must not contain control characters/,
    );
    expect(configError({ ERP_NOTIFY_URL: 'http://169.254.169.254/latest' })).toMatch(
      /ERP_NOTIFY_URL must not point to a link-local or cloud metadata address/,
    );
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
    ctx = await makeTestApp('sqlite', {}, { simulatorBaseUrl: 'http://127.0.0.1:9', runtimeConfigCacheMs: 0 });
    // Stored directly, as if the name had been re-pointed after the URL was accepted.
    await ctx.services.runtimeConfig.save(
      { erp: { notify_url: erp.url.replace('127.0.0.1', 'erp.test'), timeout_ms: 2_000 } },
      0,
      'test',
    );
  });
  afterEach(async () => {
    await ctx.close();
    await erp.close();
  });

  let seeded = 0;
  async function deliverWith(addresses: string[], blockPrivateAddresses: PrivatePolicy = false) {
    const t = await seedTransaction(ctx.services.store, { orderId: `R-${addresses.length}-${++seeded}` });
    const r = await ingestGatewayReport(
      ctx.services,
      signedReport({
        order_id: t.gatewayOrderId,
        status_code: '200',
        gross_amount: '150000.00',
        transaction_status: 'settlement',
        transaction_id: `tx-${t.id}`,
      }),
      'webhook',
    );
    const resolved: LookupAddress[] = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    const deps = {
      store: ctx.services.store,
      runtimeConfig: ctx.services.runtimeConfig,
      clock: ctx.services.clock,
      logger: ctx.services.logger,
      metrics: ctx.services.metrics,
    };
    const outbox = createOutbox(deps, {
      instanceId: 'dns',
      blockPrivateAddresses,
      resolve: (host, _o, cb) =>
        host === 'erp.test' ? cb(null, resolved) : cb(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }), []),
    });
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

  it('a name resolving to the metadata address in an IPv6 spelling (IPv4-compatible, NAT64) is refused', async () => {
    const e = await deliverWith(['::a9fe:a9fe', '64:ff9b::a9fe:a9fe']);
    expect(e).toMatchObject({ state: 'failed', lastError: 'refused: link-local or metadata address' });
    expect(erp.deliveries).toHaveLength(0);
  });

  it('a name resolving to loopback only is delivered outside production', async () => {
    const e = await deliverWith(['127.0.0.1']);
    expect(e, e?.lastError ?? '').toMatchObject({ state: 'delivered' });
    expect(erp.deliveries).toHaveLength(1);
  });

  it('production: a private address is refused, unless it is in ERP_ALLOW_PRIVATE_NETWORKS', async () => {
    const refused = await deliverWith(['127.0.0.1'], true);
    expect(refused).toMatchObject({ state: 'failed', lastError: 'refused: private address' });
    const elsewhere = await deliverWith(['127.0.0.1'], new AllowedNetworks(['10.0.0.0/8', 'fd00::/8']));
    expect(elsewhere).toMatchObject({ state: 'failed', lastError: 'refused: private address' });
    expect(erp.deliveries).toHaveLength(0);
    const allowed = await deliverWith(['127.0.0.1'], new AllowedNetworks(['10.0.0.0/8', '127.0.0.0/8']));
    expect(allowed, allowed?.lastError ?? '').toMatchObject({ state: 'delivered' });
    expect(erp.deliveries).toHaveLength(1);
  });

  it('production: an allowed range never opens a link-local or metadata address', async () => {
    const everything = new AllowedNetworks(['0.0.0.0/0', '::/0']);
    const e = await deliverWith(['127.0.0.1', '169.254.169.254'], everything);
    expect(e).toMatchObject({ state: 'failed', lastError: 'refused: link-local or metadata address' });
    expect(erp.deliveries).toHaveLength(0);
  });
});

/** A loopback listener that only counts the connections it gets (and drops them). */
async function connectionCounter(): Promise<{ port: number; readonly count: number; close(): Promise<void> }> {
  let count = 0;
  const server = net.createServer((socket) => {
    count++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    get count() {
      return count;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const resolveTo =
  (addresses: string[]) =>
  (host: string, _o: unknown, cb: (err: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) =>
    host === 'gateway.test'
      ? cb(
          null,
          addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
        )
      : cb(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }), []);

describe('gateway client: every resolved address is checked when it connects', () => {
  let listener: Awaited<ReturnType<typeof connectionCounter>>;
  beforeEach(async () => {
    listener = await connectionCounter();
  });
  afterEach(async () => listener.close());

  async function statusThrough(base: string, o: { blockPrivate: boolean; addresses?: string[] }) {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
    const runtimeConfig = defaultRuntimeConfig(
      loadConfig({ MIDTRANS_MODE: 'sandbox', MIDTRANS_SERVER_KEY: 'SB-Mid-server-guard-test-0001' }),
    );
    const client = new MidtransClient({
      runtimeConfig: async () => ({
        ...runtimeConfig,
        gateway: { ...runtimeConfig.gateway, api_base_url: base, app_base_url: base },
      }),
      logger,
      timeoutMs: 2_000,
      blockPrivateAddresses: o.blockPrivate,
      resolve: resolveTo(o.addresses ?? []),
    });
    try {
      const err = await client.status('SO-1').then(
        () => undefined,
        (e: unknown) => e,
      );
      return { err, log: lines.join('') };
    } finally {
      await client.close();
    }
  }

  it('production: a name resolving to loopback is refused before any connection (the literal address was the only thing checked)', async () => {
    const r = await statusThrough(`https://gateway.test:${listener.port}`, {
      blockPrivate: true,
      addresses: ['127.0.0.1'],
    });
    expect(r.err).toBeInstanceOf(GatewayError);
    expect(r.err).toMatchObject({ kind: 'unavailable' });
    expect(listener.count).toBe(0);
    expect(r.log).toContain('"refused":"private"');
    expect(r.log).not.toContain('SB-Mid-server-guard-test-0001');
  });

  it('any mode: a name resolving to a metadata address (beside loopback) is refused whole', async () => {
    for (const bad of ['169.254.169.254', '::a9fe:a9fe', '64:ff9b::a9fe:a9fe', '::ffff:169.254.169.254']) {
      const r = await statusThrough(`http://gateway.test:${listener.port}`, {
        blockPrivate: false,
        addresses: ['127.0.0.1', bad],
      });
      expect(r.err, bad).toMatchObject({ kind: 'unavailable' });
      expect(r.log, bad).toContain('"refused":"link-local"');
    }
    expect(listener.count).toBe(0);
  });

  it('any mode: a literal metadata address in an IPv6 spelling is refused before connecting', async () => {
    for (const host of ['[::a9fe:a9fe]', '[64:ff9b::a9fe:a9fe]', '[::ffff:a9fe:a9fe]']) {
      const r = await statusThrough(`http://${host}:${listener.port}`, { blockPrivate: false });
      expect(r.err, host).toMatchObject({ kind: 'unavailable' });
      expect(r.log, host).toContain('"refused":"link-local"');
    }
  });

  it('outside production a name resolving to loopback connects (the embedded simulator lives there)', async () => {
    await statusThrough(`http://gateway.test:${listener.port}`, { blockPrivate: false, addresses: ['127.0.0.1'] });
    expect(listener.count).toBe(1);
  });
});

describe.each(DATABASE_KINDS)('production service: the gateway host is checked where it connects (%s)', (kind) => {
  let listener: Awaited<ReturnType<typeof connectionCounter>>;
  let ctx: TestContext;
  const API_KEY = STRONG.apiKey;
  const production = (port: number) => ({
    NODE_ENV: 'production',
    log_user: 'ops',
    log_pass: STRONG.operatorPass,
    API_KEYS: API_KEY,
    MIDTRANS_MODE: 'sandbox',
    MIDTRANS_SERVER_KEY: 'SB-Mid-server-prod-guard-0001',
    PUBLIC_BASE_URL: 'https://pay.example.com',
    CONFIG_ENCRYPTION_KEY: STRONG.configEncryptionKey,
    MIDTRANS_API_BASE_URL: `https://gateway.test:${port}`,
  });
  beforeEach(async () => {
    listener = await connectionCounter();
    ctx = await makeTestApp(kind, production(listener.port), {
      gatewayResolve: resolveTo(['127.0.0.1']),
      gatewayTimeoutMs: 2_000,
    });
  });
  afterEach(async () => {
    await ctx.close();
    await listener.close();
  });

  it('MIDTRANS_API_BASE_URL=https://NAME with NAME resolving to 127.0.0.1: the status call is refused, nothing connects', async () => {
    await seedTransaction(ctx.services.store, { orderId: 'SO-GUARD-1' });
    const res = await ctx.app.inject({
      method: 'GET',
      url: '/api/payments/SO-GUARD-1/status',
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'GATEWAY_UNAVAILABLE' });
    expect(listener.count).toBe(0);
  });

  it('the literal loopback address stops the start in production', () => {
    expect(configError({ ...production(8443), MIDTRANS_API_BASE_URL: 'https://127.0.0.1:8443' })).toMatch(
      /MIDTRANS_API_BASE_URL must not point to a private, loopback or link-local address in production/,
    );
    expect(configError({ ...production(8443), ERP_NOTIFY_URL: 'https://[::ffff:10.0.0.5]/hook' })).toMatch(
      /ERP_NOTIFY_URL must not point to a private/,
    );
  });
});
