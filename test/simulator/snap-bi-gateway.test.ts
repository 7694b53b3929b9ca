/** paylink's BI-SNAP client and adapter against the simulator over HTTP: one shared token, refresh, retry, results in the port's terms. */
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../simulator/index.js';
import { SnapBiClient, type SnapBiCredentials } from '../../src/gateway/snap-bi/client.js';
import { SnapBiGateway, vaNumbers } from '../../src/gateway/snap-bi/gateway.js';
import { MidtransClient } from '../../src/gateway/midtrans/client.js';
import { MidtransGateway } from '../../src/gateway/midtrans/gateway.js';
import { defaultRuntimeConfig } from '../../src/config/runtime.js';
import { loadConfig } from '../../src/config/env.js';
import { GatewayError, type ChargeOrder } from '../../src/gateway/port.js';
import { KEY, call, oid, start } from './helpers.js';

const merchant = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});
const CLIENT = { clientId: 'paylink-client', clientSecret: 'paylink-secret', partnerId: 'paylink-partner' };
const logger = pino({ level: 'silent' });

let sim: RunningSimulator;
let creds: SnapBiCredentials;
beforeAll(async () => {
  sim = await start({ snapBi: { ...CLIENT, merchantPublicKey: merchant.publicKey, tokenLifetimeS: 900 } });
  creds = { baseUrl: sim.baseUrl, ...CLIENT, channelId: '12345', privateKey: merchant.privateKey };
});
afterAll(async () => sim.close());

const clientWith = (o: { now?: () => number; timeoutMs?: number; baseUrl?: string } = {}) =>
  new SnapBiClient({
    credentials: async () => ({ ...creds, ...(o.baseUrl ? { baseUrl: o.baseUrl } : {}) }),
    logger,
    ...(o.now ? { now: o.now } : {}),
    ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}),
  });
const statusBody = (id: string) => ({ originalPartnerReferenceNo: id, serviceCode: '54' });

describe('SnapBiClient', () => {
  it('shares one token between concurrent calls, and reuses it', async () => {
    const client = clientWith();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        client.call('debit.status', '/v1.0/debit/status', statusBody('nobody'), oid('e')),
      ),
    );
    expect(answers.map((a) => a.responseCode)).toEqual(Array(6).fill('4045501'));
    await client.call('debit.status', '/v1.0/debit/status', statusBody('nobody'), oid('e'));
    expect(client.tokensFetched).toBe(1);
    await client.close();
  });

  it('replaces the token shortly before its lifetime ends', async () => {
    let skew = 0;
    const client = clientWith({ now: () => Date.now() + skew });
    await client.call('debit.status', '/v1.0/debit/status', statusBody('nobody'), oid('e'));
    skew = 839_000;
    await client.call('debit.status', '/v1.0/debit/status', statusBody('nobody'), oid('e'));
    expect(client.tokensFetched).toBe(1);
    skew = 841_000;
    await client.call('debit.status', '/v1.0/debit/status', statusBody('nobody'), oid('e'));
    expect(client.tokensFetched).toBe(2);
    await client.close();
  });

  it('a token the gateway no longer accepts (401SS01) is replaced once and the request sent again', async () => {
    const client = clientWith();
    await client.call('debit.status', '/v1.0/debit/status', statusBody('nobody'), oid('e'));
    await call(sim.baseUrl, 'POST', '/_sim/snap-bi/expire-tokens', { auth: false });
    const a = await client.call('debit.status', '/v1.0/debit/status', statusBody('nobody'), oid('e'));
    expect(a.responseCode).toBe('4045501');
    expect(client.tokensFetched).toBe(2);
    await client.close();
  });

  it('a gateway that does not answer in time is a timeout', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const client = clientWith({
      timeoutMs: 300,
      baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
    });
    const err = await client.call('x', '/v1.0/debit/status', {}, 'e').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).kind).toBe('timeout');
    await client.close();
    silent.closeAllConnections();
    await new Promise((r) => silent.close(r));
  });
});

describe('SnapBiGateway in the port terms', () => {
  const gw = (partnerServiceId = '   70012') =>
    new SnapBiGateway(
      clientWith(),
      async () => 'G123456789',
      async () => partnerServiceId,
    );
  const order = (paymentType: ChargeOrder['paymentType'], method: ChargeOrder['method']): ChargeOrder => ({
    gatewayOrderId: oid('pl'),
    nominal: 50_000,
    paymentType,
    method,
  });

  it('a VA charge answers pending with the VA number; paid, its status is settlement', async () => {
    const g = gw();
    const o = order('bank_transfer', { bank: 'bca' } as ChargeOrder['method']);
    const charged = await g.charge(o);
    expect(charged).toMatchObject({
      kind: 'answered',
      answer: {
        status_code: '201',
        transaction_status: 'pending',
        order_id: o.gatewayOrderId,
        gross_amount: '50000.00',
      },
    });
    if (charged.kind !== 'answered') throw new Error('not answered');
    expect(charged.answer.va_numbers).toEqual([
      { bank: 'bca', va_number: vaNumbers(o.gatewayOrderId, '   70012').virtualAccountNo.trim() },
    ]);
    expect(
      (await call(sim.baseUrl, 'POST', `/_sim/transactions/${o.gatewayOrderId}/pay`, { auth: false })).status,
    ).toBe(200);
    expect(await g.status('va', o.gatewayOrderId)).toMatchObject({
      transaction_status: 'settlement',
      status_code: '200',
    });
    expect(await g.status('qris', o.gatewayOrderId)).toBeUndefined();
  });

  it('QRIS: charge with its QR string, cancel; gopay: paid then refunded in part', async () => {
    const g = gw();
    const q = order('qris', {} as ChargeOrder['method']);
    const charged = await g.charge(q);
    if (charged.kind !== 'answered') throw new Error('not answered');
    expect(charged.answer.qr_string).toMatch(/\S+/);
    expect(await g.cancel('qris', q.gatewayOrderId)).toMatchObject({
      kind: 'answered',
      answer: { transaction_status: 'cancel' },
    });

    const d = order('gopay', {} as ChargeOrder['method']);
    const dc = await g.charge(d);
    expect(dc).toMatchObject({
      kind: 'answered',
      answer: { payment_type: 'gopay', actions: [{ name: 'deeplink-redirect' }] },
    });
    await call(sim.baseUrl, 'POST', `/_sim/transactions/${d.gatewayOrderId}/pay`, { auth: false });
    const refunded = await g.refund('debit', d.gatewayOrderId, { refundKey: oid('rk'), amount: 10_000 });
    expect(refunded).toMatchObject({
      kind: 'answered',
      answer: { transaction_status: 'refund', refunds: [{ refund_amount: '10000.00' }] },
    });
  });

  it('a refusal is a result; the same create again is answered as the first', async () => {
    const g = gw();
    const o = order('gopay', {} as ChargeOrder['method']);
    const first = await g.charge(o);
    expect(await g.charge(o)).toEqual(first);
    const bad = await g.charge({ ...o, gatewayOrderId: 'bad id with spaces' });
    expect(bad).toMatchObject({ kind: 'refused', refusal: { code: '4005402' } });
  });

  it('the VA numbers start with the configured partnerServiceId; a malformed one is refused by the gateway', async () => {
    const o = order('bank_transfer', { bank: 'bni' } as ChargeOrder['method']);
    const charged = await gw('  123456').charge(o);
    if (charged.kind !== 'answered') throw new Error(`not answered: ${JSON.stringify(charged)}`);
    expect(charged.answer.va_numbers?.[0]?.va_number).toMatch(/^123456\d{12}$/);
    expect((await gw('  123456').status('va', o.gatewayOrderId))?.va_numbers?.[0]?.va_number).toBe(
      charged.answer.va_numbers?.[0]?.va_number,
    );
    const bad = await gw('123456').charge(order('bank_transfer', { bank: 'bni' } as ChargeOrder['method']));
    expect(bad).toMatchObject({ kind: 'refused', refusal: { code: '4002701' } });
  });
});

describe('the legacy API on a BI-SNAP transaction', () => {
  it('answers it only with transaction-source: SNAP_API, which the legacy adapter sends for a BI-SNAP carrier', async () => {
    const d = {
      gatewayOrderId: oid('lg'),
      nominal: 30_000,
      paymentType: 'gopay' as const,
      method: {} as ChargeOrder['method'],
    };
    const snap = new SnapBiGateway(
      clientWith(),
      async () => 'G123456789',
      async () => '   70012',
    );
    expect((await snap.charge(d)).kind).toBe('answered');
    await call(sim.baseUrl, 'POST', `/_sim/transactions/${d.gatewayOrderId}/pay`, { auth: false });
    expect((await call(sim.baseUrl, 'GET', `/v2/${d.gatewayOrderId}/status`)).status).toBe(404);
    const withHeader = await call(sim.baseUrl, 'GET', `/v2/${d.gatewayOrderId}/status`, {
      headers: { 'transaction-source': 'SNAP_API' },
    });
    expect(withHeader.body).toMatchObject({ transaction_status: 'settlement', order_id: d.gatewayOrderId });
    // Expire is not among the calls the gateway serves for a BI-SNAP transaction, header or not.
    expect(
      (
        await call(sim.baseUrl, 'POST', `/v2/${d.gatewayOrderId}/expire`, {
          headers: { 'transaction-source': 'SNAP_API' },
        })
      ).body,
    ).toMatchObject({ status_code: '404' });

    const settings = defaultRuntimeConfig(
      loadConfig({ MIDTRANS_MODE: 'simulator', MIDTRANS_SERVER_KEY: KEY }),
      sim.baseUrl,
    );
    const client = new MidtransClient({ runtimeConfig: async () => settings, logger });
    const legacy = new MidtransGateway(client, async () => settings);
    expect(await legacy.status(d.gatewayOrderId, { carrier: 'legacy' })).toBeUndefined();
    expect(await legacy.status(d.gatewayOrderId, { carrier: 'snap_bi' })).toMatchObject({
      transaction_status: 'settlement',
    });
    const refunded = await legacy.refund(
      d.gatewayOrderId,
      { refundKey: oid('rk'), amount: 5_000 },
      { carrier: 'snap_bi' },
    );
    expect(refunded).toMatchObject({ kind: 'answered' });
    await client.close();
  });
});
