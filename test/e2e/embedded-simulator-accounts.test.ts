/**
 * `npm start` in simulator mode serves every account in simulator mode from its embedded simulator,
 * each as a merchant of its own: an account created through the API with its own server key and
 * MID takes payments on the embedded simulator, its ERP gets exactly its own signed event naming
 * it, and `default` is unaffected. A restart serves the account again; a MID or key another
 * merchant uses, or none, is a clear 400 and creates nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { DATABASE_KINDS, TEST_DATABASE_URL, tempDir } from '../helpers/stores.js';
import { E2E_SERVER_KEY, simClient } from '../helpers/e2e.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { freePort, startServiceProcess, stopServiceProcess, type ServiceProcess } from '../helpers/child.js';

const ENV_KEY = 'env-key-default-account-embedded-0123';
const OPERATOR = { user: 'ops', pass: 'embedded-simulator-operator-pass' };
const DEFAULT_SECRET = 'default-erp-secret-embedded-simulator-01';
const B = {
  id: 'shop-b',
  serverKey: 'SB-Mid-server-embedded-shop-b-0002',
  mid: 'GB00000002',
  secret: 'shop-b-erp-secret-embedded-simulator-02',
};

async function waitUntil(ok: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

type Answer = { status: number; body: Record<string, unknown> };

describe.each(DATABASE_KINDS)('the embedded simulator serves every account in simulator mode (%s)', (kind) => {
  let dir: string;
  let env: Record<string, string>;
  let service: ServiceProcess | undefined;
  let simUrl: string;
  let erpDefault: ErpReceiver;
  let erpB: ErpReceiver;
  let keyB = '';
  const cleanups: Array<() => Promise<void>> = [];

  async function start(): Promise<void> {
    const [port, simPort] = [await freePort(), await freePort()];
    service = await startServiceProcess({ ...env, PORT: String(port), SIMULATOR_PORT: String(simPort) }, 30_000);
    simUrl = `http://127.0.0.1:${simPort}`;
  }

  async function call(method: string, url: string, auth: string, body?: unknown): Promise<Answer> {
    const res = await fetch(`${service?.url ?? ''}${url}`, {
      method,
      headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }
  const op = `Basic ${Buffer.from(`${OPERATOR.user}:${OPERATOR.pass}`).toString('base64')}`;
  const asOp = (method: string, url: string, body?: unknown) => call(method, url, op, body);
  const asKey = (key: string, method: string, url: string, body?: unknown) => call(method, url, `Bearer ${key}`, body);
  const pay = (orderId: string, mid: string) =>
    simClient(simUrl).post(`/_sim/transactions/${orderId}/pay?merchant_id=${mid}`, { payment_type: 'bank_transfer' });

  beforeAll(async () => {
    dir = tempDir('paylink-embedded-accounts-');
    erpDefault = await startErpReceiver({ secret: DEFAULT_SECRET });
    erpB = await startErpReceiver({ secret: B.secret });
    let database: Record<string, string> = {};
    if (kind === 'postgres') {
      const base = new URL(TEST_DATABASE_URL ?? '');
      const name = `paylink_embedded_${process.pid}_${Date.now()}`;
      const admin = new pg.Client({ connectionString: base.href });
      await admin.connect();
      await admin.query(`create database ${name}`);
      cleanups.push(async () => {
        await admin.query(`drop database if exists ${name} with (force)`);
        await admin.end();
      });
      database = { DATABASE_URL: Object.assign(new URL(base.href), { pathname: `/${name}` }).href };
    }
    env = {
      DATA_DIR: dir,
      LOG_DIR: path.join(dir, 'logs'),
      MIDTRANS_MODE: 'simulator',
      MIDTRANS_SERVER_KEY: E2E_SERVER_KEY,
      API_KEYS: ENV_KEY,
      ERP_NOTIFY_URL: erpDefault.url,
      ERP_WEBHOOK_SECRET: DEFAULT_SECRET,
      log_user: OPERATOR.user,
      log_pass: OPERATOR.pass,
      ...database,
    };
    await start();
  }, 60_000);

  afterAll(async () => {
    if (service) await stopServiceProcess(service, 'SIGTERM');
    await erpDefault?.close();
    await erpB?.close();
    for (const c of cleanups) await c();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('an account created through the API is paid on the embedded simulator; only its ERP hears of it', async () => {
    const created = await asOp('POST', '/api/accounts', {
      id: B.id,
      config: {
        gateway: { mode: 'simulator', server_key: B.serverKey, merchant_id: B.mid },
        erp: { notify_url: erpB.url, webhook_secret: B.secret, timeout_ms: 2_000 },
      },
    });
    expect(created.status).toBe(201);
    const key = await asOp('POST', `/api/accounts/${B.id}/api-keys`);
    expect(key.status).toBe(201);
    keyB = String(key.body.key);

    // The same order id in both accounts: two merchants' ledgers at the simulator.
    expect((await asKey(keyB, 'POST', '/api/payment-links', { order_id: 'SAME-1', nominal: 15_000 })).status).toBe(201);
    expect((await asKey(ENV_KEY, 'POST', '/api/payment-links', { order_id: 'SAME-1', nominal: 7_000 })).status).toBe(
      201,
    );
    expect((await pay('SAME-1', B.mid)).status).toBe(200);
    await erpB.waitFor((r) => r.accepted().length >= 1, 20_000);
    const [eventB] = erpB.accepted();
    expect(eventB?.verified).toBe(true);
    expect(eventB?.json).toMatchObject({ account: B.id, order_id: 'SAME-1', status: 'paid', gross_amount: 15_000 });
    // The default account's payment of the same order id is still pending.
    const pending = await asKey(ENV_KEY, 'GET', '/api/payment-links/SAME-1');
    expect(pending.body).toMatchObject({ nominal: 7_000, status: 'pending' });

    expect((await pay('SAME-1', 'G123456789')).status).toBe(200);
    await erpDefault.waitFor((r) => r.accepted().length >= 1, 20_000);
    const [eventDefault] = erpDefault.accepted();
    expect(eventDefault?.verified).toBe(true);
    expect(eventDefault?.json).toMatchObject({
      account: 'default',
      order_id: 'SAME-1',
      status: 'paid',
      gross_amount: 7_000,
    });
    // Each ERP got its own event only: B's once, default's never at B.
    expect(erpB.accepted().map((d) => d.webhookId)).toEqual([eventB?.webhookId]);
    expect(erpDefault.accepted().map((d) => d.webhookId)).toEqual([eventDefault?.webhookId]);

    // The notification of B's payment went to B's own URL, signed for B's MID.
    const notes = await simClient(simUrl).get(`/_sim/notifications?order_id=SAME-1&merchant_id=${B.mid}`);
    const [note] = (notes.body as { notifications: Array<{ payload: Record<string, string> }> }).notifications;
    expect(note?.payload.merchant_id).toBe(B.mid);
  });

  it('a MID or server key another merchant uses, or none, is a clear 400 and creates nothing', async () => {
    const attempt = (id: string, gateway: Record<string, unknown>) =>
      asOp('POST', '/api/accounts', { id, config: { gateway: { mode: 'simulator', ...gateway } } });
    const paths = (a: Answer) => (a.body.errors as Array<{ path: string; message: string }> | undefined) ?? [];

    const sameMid = await attempt('shop-c', { server_key: 'SB-Mid-server-embedded-shop-c-03', merchant_id: B.mid });
    expect(sameMid.status).toBe(400);
    expect(sameMid.body.code).toBe('VALIDATION_FAILED');
    expect(paths(sameMid)).toEqual([
      { path: 'config.gateway.merchant_id', message: `account shop-c: merchant_id is already used by account ${B.id}` },
    ]);

    const defaultKey = await attempt('shop-c', { server_key: E2E_SERVER_KEY, merchant_id: 'GC00000003' });
    expect(defaultKey.status).toBe(400);
    expect(paths(defaultKey)).toEqual([
      { path: 'config.gateway.server_key', message: 'account shop-c: server_key is already used by account default' },
    ]);

    const keyless = await attempt('shop-c', { merchant_id: 'GC00000003' });
    expect(keyless.status).toBe(400);
    expect(paths(keyless).map((e) => e.path)).toEqual(['config.gateway.server_key']);

    expect((await asOp('GET', '/api/accounts/shop-c/config')).status).toBe(404);
    // Changing B's MID to the default merchant's is refused the same way, and B keeps its own.
    const change = await asOp('POST', `/api/accounts/${B.id}/config`, { gateway: { merchant_id: 'G123456789' } });
    expect(change.status).toBe(400);
    expect(paths(change).map((e) => e.path)).toEqual(['gateway.merchant_id']);
  });

  it('a new MID takes effect on the simulator at once, and a restart serves the account again', async () => {
    const NEW_MID = 'GB00000022';
    expect((await asOp('POST', `/api/accounts/${B.id}/config`, { gateway: { merchant_id: NEW_MID } })).status).toBe(
      200,
    );
    expect((await asKey(keyB, 'POST', '/api/payment-links', { order_id: 'AFTER-1', nominal: 11_000 })).status).toBe(
      201,
    );
    expect((await pay('AFTER-1', NEW_MID)).status).toBe(200);
    await erpB.waitFor((r) => r.accepted().length >= 2, 20_000);
    expect(erpB.accepted()[1]?.json).toMatchObject({ account: B.id, order_id: 'AFTER-1', gross_amount: 11_000 });

    // Every notification of the payment answered before the stop, so none is in flight across it.
    await waitUntil(async () => {
      const r = await simClient(simUrl).get(`/_sim/notifications?order_id=AFTER-1&merchant_id=${NEW_MID}`);
      const list = (r.body as { notifications: Array<{ outcome: string }> }).notifications;
      return list.length > 0 && list.every((n) => n.outcome === 'delivered');
    });
    if (service) {
      const ended = await stopServiceProcess(service, 'SIGTERM');
      if (ended.code !== 0) console.log(service.output().slice(-6000));
      expect(ended).toEqual({ code: 0, signal: null });
    }
    service = undefined;
    await start();
    expect((await asKey(keyB, 'POST', '/api/payment-links', { order_id: 'RESTART-1', nominal: 12_000 })).status).toBe(
      201,
    );
    expect((await pay('RESTART-1', NEW_MID)).status).toBe(200);
    await erpB.waitFor((r) => r.accepted().length >= 3, 20_000);
    expect(erpB.accepted()[2]?.json).toMatchObject({ account: B.id, order_id: 'RESTART-1', gross_amount: 12_000 });
    expect(erpB.accepted().every((d) => d.verified === true)).toBe(true);
    expect(erpDefault.accepted()).toHaveLength(1);
  }, 60_000);
});
