import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { gatewayTimeToIso } from '../../src/gateway/time.js';
import { toJakartaIso } from '../../src/platform/time.js';
import { deliver, deliveryHeaders } from '../../src/erp/deliver.js';
import { Value } from 'typebox/value';
import { ErpEventSchema, statusChangedEvent, testEvent } from '../../src/erp/events.js';
import { ERP_EVENT_EXAMPLE } from '../../src/http/schemas/examples.js';
import { newTransaction } from '../helpers/seed.js';
import type { TransactionRecord } from '../../src/model/payment.js';

describe('ERP times', () => {
  it('gateway WIB times and instants become ISO 8601 with +07:00', () => {
    expect(gatewayTimeToIso('2026-11-22 10:00:00')).toBe('2026-11-22T10:00:00+07:00');
    expect(gatewayTimeToIso('2026-11-22T03:00:00Z')).toBe('2026-11-22T10:00:00+07:00');
    expect(gatewayTimeToIso('2026-11-22T10:00:00+07:00')).toBe('2026-11-22T10:00:00+07:00');
    expect(gatewayTimeToIso('yesterday')).toBeNull();
    expect(gatewayTimeToIso('2026-11-22T10:00:00')).toBe('2026-11-22T10:00:00+07:00');
    expect(gatewayTimeToIso('2026-11-22T10:00')).toBeNull();
    expect(gatewayTimeToIso(undefined)).toBeNull();
    expect(toJakartaIso(new Date('2026-11-22T20:30:00.000Z'))).toBe('2026-11-23T03:30:00+07:00');
  });
});

describe('ERP event bodies', () => {
  it('carry the mercant_id and order_id stored at creation, never the sanitized id', () => {
    const t: TransactionRecord = {
      ...newTransaction({ orderId: 'INV/2026/0042:2', status: 'paid' }),
      account: 'default',
      carrier: 'legacy',
      transactionStatus: 'settlement',
      fraudStatus: 'accept',
      paymentType: 'bank_transfer',
      gatewayTransactionId: 'gw',
      settlementTime: '2026-11-22T10:05:00+07:00',
      transactionTime: '2026-11-22T10:00:00+07:00',
      statusVersion: 3,
      refundedAmount: 0,
      paidAmount: 150000,
      originalAmount: null,
      feeAmount: null,
      netAmount: null,
      paymentLinkOrderId: null,
      flags: null,
      lastEventAt: null,
      createdAt: '',
      updatedAt: '',
    };
    const ev = statusChangedEvent(t, 150000, 'e1', new Date('2026-11-22T03:06:00Z'));
    expect(ev).toMatchObject({
      mercant_id: 'INV/2026/0042',
      order_id: 'INV/2026/0042:2',
      gateway_order_id: 'INV.2026.0042.2',
      gross_amount: 150000,
      status_version: 3,
      occurred_at: '2026-11-22T10:06:00+07:00',
    });
    expect(Object.keys(ev)).toEqual([
      'type',
      'event_id',
      'mercant_id',
      'order_id',
      'gateway_order_id',
      'status',
      'transaction_status',
      'fraud_status',
      'payment_type',
      'gross_amount',
      'transaction_id',
      'transaction_time',
      'settlement_time',
      'occurred_at',
      'status_version',
      'expected_amount',
      'amount_mismatch',
    ]);
    expect(ev).toMatchObject({ expected_amount: 150000, amount_mismatch: false });
    // A payment flagged as paid with another amount says so in every event of it.
    expect(statusChangedEvent({ ...t, flags: 'x,amount_mismatch' }, 140000, 'e2', new Date())).toMatchObject({
      gross_amount: 140000,
      expected_amount: 150000,
      amount_mismatch: true,
    });
  });

  it('test events are clearly marked and default sensibly', () => {
    const ev = testEvent({}, 'abcdef12-0000', new Date());
    expect(ev).toMatchObject({
      type: 'payment.test',
      test: true,
      mercant_id: 'TEST',
      order_id: 'TEST:abcdef12',
      gateway_order_id: 'TEST.abcdef12',
      status: 'pending',
      gross_amount: 0,
    });
    expect(testEvent({ order_id: 'SO-1:9', status: 'expired' }, 'x', new Date())).toMatchObject({
      mercant_id: 'SO-1',
      order_id: 'SO-1:9',
      status: 'expired',
    });
  });
});

describe('Standard Webhooks signing', () => {
  const sentAt = new Date();
  const body = '{"type":"payment.status_changed","n":1}';

  it('whsec_ secrets: verifiable by the standardwebhooks library, HMAC over id.timestamp.body', () => {
    const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
    const h = deliveryHeaders('evt-1', sentAt, body, secret);
    expect(h['webhook-id']).toBe('evt-1');
    expect(h['webhook-timestamp']).toBe(String(Math.floor(sentAt.getTime() / 1000)));
    const expected = createHmac('sha256', Buffer.from('0123456789abcdef0123456789abcdef'))
      .update(`evt-1.${h['webhook-timestamp']}.${body}`)
      .digest('base64');
    expect(h['webhook-signature']).toBe(`v1,${expected}`);
    expect(new Webhook(secret).verify(body, h)).toEqual(JSON.parse(body));
  });

  it('raw secrets are used as their UTF-8 bytes', () => {
    const h = deliveryHeaders('evt-2', sentAt, body, 'plain-secret-ü');
    const expected = createHmac('sha256', Buffer.from('plain-secret-ü', 'utf8'))
      .update(`evt-2.${h['webhook-timestamp']}.${body}`)
      .digest('base64');
    expect(h['webhook-signature']).toBe(`v1,${expected}`);
    expect(() => new Webhook(Buffer.from('plain-secret-ü', 'utf8'), { format: 'raw' }).verify(body, h)).not.toThrow();
    expect(() => new Webhook(Buffer.from('other', 'utf8'), { format: 'raw' }).verify(body, h)).toThrow();
  });

  it('no secret → no signature header', () => {
    expect(deliveryHeaders('e', sentAt, body, undefined)['webhook-signature']).toBeUndefined();
  });
});

describe('deliver()', () => {
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/redirect') return void res.writeHead(307, { location: '/ok' }).end();
      if (req.url === '/hang') return;
      if (req.url === '/big') return void res.writeHead(200).end('x'.repeat(1_000_000));
      if (req.url === '/ra') return void res.writeHead(429, { 'retry-after': '7' }).end();
      res.writeHead(200).end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const req = (path: string, timeoutMs = 2_000) =>
    deliver({ url: `${url}${path}`, eventId: 'e', body: '{}', timeoutMs, sentAt: new Date() });

  it('2xx', async () => {
    expect(await req('/ok')).toMatchObject({ statusCode: 200, error: null });
  });
  it('does not follow redirects', async () => {
    expect(await req('/redirect')).toMatchObject({ statusCode: 307, error: 'HTTP 307' });
  });
  it('times out', async () => {
    expect(await req('/hang', 300)).toMatchObject({ statusCode: null, error: 'timeout' });
  });
  it('reads only a capped part of a large answer', async () => {
    expect(await req('/big')).toMatchObject({ statusCode: 200 });
  });
  it('passes Retry-After on', async () => {
    expect(await req('/ra')).toMatchObject({ statusCode: 429, retryAfter: '7' });
  });
  it('connection refused is an error, not a throw', async () => {
    const r = await deliver({
      url: 'http://127.0.0.1:9/x',
      eventId: 'e',
      body: '{}',
      timeoutMs: 1_000,
      sentAt: new Date(),
    });
    expect(r).toMatchObject({ statusCode: null, error: 'connection refused' });
  });
});

describe('the ERP event example of the reference (OpenAPI webhooks)', () => {
  it('is an event as ErpEventSchema describes it, so it cannot fall behind the schema', () => {
    expect(Value.Errors(ErpEventSchema, ERP_EVENT_EXAMPLE).map((e) => `${e.instancePath} ${e.message}`)).toEqual([]);
    expect(Value.Check(ErpEventSchema, { ...ERP_EVENT_EXAMPLE, unexpected: 1 })).toBe(false);
  });
});
