import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../simulator/index.js';
import { arr, basic, call, charge, chargeBody, oid, s, start } from './helpers.js';

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await start();
});
afterAll(async () => {
  await sim.close();
});

const JAKARTA_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

describe('Core API auth and errors', () => {
  it('refuses a missing or wrong server key with HTTP 401 and the Core body', async () => {
    for (const auth of [false, basic('SB-Mid-server-wrong')] as const) {
      const r = await call(sim.baseUrl, 'POST', '/v2/charge', { body: chargeBody(oid()), auth });
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({
        status_code: '401',
        status_message: 'Transaction cannot be authorized with the current client/server key.',
      });
    }
  });

  it('answers malformed JSON with a gateway body, not a Fastify default', async () => {
    const r = await call(sim.baseUrl, 'POST', '/v2/charge', { raw: '{"payment_type":' });
    expect(r.status).toBe(400);
    expect(r.body.status_code).toBe('413');
    expect(r.body).not.toHaveProperty('statusCode');
  });

  it('answers unknown paths with the Spring-style 404 body', async () => {
    const r = await call(sim.baseUrl, 'GET', '/v2/a/b/c/d');
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ status: 404, error: 'Not Found', path: '/v2/a/b/c/d' });
  });

  it('validates the charge payload with validation_messages and HTTP 400', async () => {
    const cases: [unknown, string][] = [
      [
        { ...chargeBody('bad id!'), payment_type: 'bank_transfer' },
        'transaction_details.order_id contains invalid characters',
      ],
      [chargeBody('x'.repeat(51)), 'too long'],
      [chargeBody(oid(), 0), 'gross_amount must be greater than or equal to 0.01'],
      [chargeBody(oid(), 100.5), 'gross_amount must be an integer'],
      [
        { ...chargeBody(oid(), 1000), item_details: [{ name: 'A', price: 400, quantity: 2 }] },
        'is not equal to the sum of item_details',
      ],
      [{ ...chargeBody(oid(), 800), item_details: [{ price: 400, quantity: 2 }] }, 'item_details[0].name is required'],
      [{ ...chargeBody(oid()), bank_transfer: {} }, 'bank_transfer.bank is required'],
      [{ ...chargeBody(oid()), payment_type: 'bitcoin' }, "payment_type 'bitcoin' is not supported"],
      [{ transaction_details: { order_id: oid(), gross_amount: 1 } }, 'payment_type is required'],
      [{ ...chargeBody(oid()), payment_type: 'echannel' }, 'echannel.bill_info1 is required'],
      [
        { ...chargeBody(oid()), custom_expiry: { expiry_duration: 0, unit: 'minute' } },
        'custom_expiry.expiry_duration',
      ],
    ];
    for (const [body, message] of cases) {
      const r = await call(sim.baseUrl, 'POST', '/v2/charge', { body });
      expect(r.status, message).toBe(400);
      expect(r.body).toMatchObject({
        status_code: '400',
        status_message: 'One or more parameters in the payload is invalid.',
      });
      expect(typeof r.body.id).toBe('string');
      expect(Array.isArray(r.body.validation_messages)).toBe(true);
      expect(JSON.stringify(r.body.validation_messages)).toContain(message);
    }
  });
});

describe('Core charge per payment type', () => {
  it('bank_transfer BCA: 201 pending with va_numbers and gateway formats', async () => {
    const id = oid();
    const r = await charge(sim.baseUrl, id, { metadata: { erp: 'x' }, custom_field1: 'c1' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      status_code: '201',
      status_message: 'Success, Bank Transfer transaction is created',
      order_id: id,
      gross_amount: '150000.00',
      currency: 'IDR',
      payment_type: 'bank_transfer',
      transaction_status: 'pending',
      fraud_status: 'accept',
      merchant_id: 'G123456789',
      metadata: { erp: 'x' },
      custom_field1: 'c1',
    });
    expect(s(r.body.transaction_id)).toMatch(/^[0-9a-f-]{36}$/);
    expect(s(r.body.transaction_time)).toMatch(JAKARTA_TIME);
    expect(s(r.body.expiry_time)).toMatch(JAKARTA_TIME);
    expect(arr(r.body.va_numbers)[0]).toMatchObject({ bank: 'bca' });
    expect(s(arr(r.body.va_numbers)[0]?.va_number)).toMatch(/^\d+$/);
  });

  it('transaction_time is Jakarta wall-clock time', async () => {
    const r = await charge(sim.baseUrl, oid());
    const jakarta = new Date(Date.now() + 7 * 3600_000).toISOString().slice(0, 16).replace('T', ' ');
    expect(s(r.body.transaction_time).slice(0, 16)).toBe(jakarta);
  });

  it('permata, bni, bri, cimb, echannel, gopay, qris, cstore answer their own fields', async () => {
    const bank = async (b: string): Promise<Record<string, unknown>> =>
      (await charge(sim.baseUrl, oid(), { bank_transfer: { bank: b } })).body;
    const permata = await bank('permata');
    expect(permata.va_numbers).toBeUndefined();
    expect(s(permata.permata_va_number)).toMatch(/^\d{16}$/);
    for (const b of ['bni', 'bri', 'cimb']) expect(arr((await bank(b)).va_numbers)[0]?.bank).toBe(b);
    const ech = await charge(sim.baseUrl, oid(), {
      payment_type: 'echannel',
      echannel: { bill_info1: 'Payment:', bill_info2: 'Invoice' },
    });
    expect(ech.body).toMatchObject({ status_code: '201', payment_type: 'echannel', biller_code: '70012' });
    expect(s(ech.body.bill_key)).toMatch(/^\d{12}$/);
    const gopay = await charge(sim.baseUrl, oid(), { payment_type: 'gopay' });
    expect(arr(gopay.body.actions).map((a) => a.name)).toEqual([
      'generate-qr-code',
      'deeplink-redirect',
      'get-status',
      'cancel',
    ]);
    const qris = await charge(sim.baseUrl, oid(), { payment_type: 'qris', qris: { acquirer: 'gopay' } });
    expect(qris.body).toMatchObject({
      status_code: '201',
      status_message: 'QRIS transaction is created',
      acquirer: 'gopay',
    });
    expect(s(qris.body.qr_string)).toMatch(/^0002/);
    expect(qris.body.expire_time).toBe(qris.body.expiry_time);
    const cstore = await charge(sim.baseUrl, oid(), { payment_type: 'cstore', cstore: { store: 'indomaret' } });
    expect(cstore.body).toMatchObject({ status_code: '201', store: 'indomaret' });
    expect(s(cstore.body.payment_code)).toMatch(/^\d+$/);
  });

  it('credit card: accept → capture 200, magic tokens deny 202 or challenge 201, no token 411', async () => {
    const card = (token?: string): Promise<Record<string, unknown>> =>
      charge(sim.baseUrl, oid(), {
        payment_type: 'credit_card',
        credit_card: token === undefined ? {} : { token_id: token },
      }).then((r) => r.body);
    expect(await card('481111-1114-sim-token')).toMatchObject({
      status_code: '200',
      transaction_status: 'capture',
      fraud_status: 'accept',
      masked_card: '481111-1114',
    });
    expect(await card('deny-token')).toMatchObject({ status_code: '202', transaction_status: 'deny' });
    expect(await card('tok-4411111111111118')).toMatchObject({ status_code: '202', masked_card: '441111-1118' });
    expect(await card('challenge-token')).toMatchObject({
      status_code: '201',
      transaction_status: 'capture',
      fraud_status: 'challenge',
    });
    expect(await card()).toMatchObject({ status_code: '411' });
  });

  it('custom_expiry sets expiry_time from order_time', async () => {
    const r = await charge(sim.baseUrl, oid(), {
      custom_expiry: { order_time: '2030-01-01 10:00:00 +0700', expiry_duration: 90, unit: 'minute' },
    });
    expect(r.body.expiry_time).toBe('2030-01-01 11:30:00');
  });
});

describe('Core order id reuse', () => {
  it('duplicate order id → 406 (HTTP mirrors it by default)', async () => {
    const id = oid();
    await charge(sim.baseUrl, id);
    const r = await charge(sim.baseUrl, id);
    expect(r.status).toBe(406);
    expect(r.body).toMatchObject({ status_code: '406' });
  });

  it('an expired or cancelled order id can be charged again', async () => {
    for (const action of ['expire', 'cancel']) {
      const id = oid();
      const first = await charge(sim.baseUrl, id);
      await call(sim.baseUrl, 'POST', `/v2/${id}/${action}`);
      const again = await charge(sim.baseUrl, id);
      expect(again.body.status_code).toBe('201');
      expect(again.body.transaction_id).not.toBe(first.body.transaction_id);
      const st = await call(sim.baseUrl, 'GET', `/v2/${id}/status`);
      expect(st.body.transaction_id).toBe(again.body.transaction_id);
      const old = await call(sim.baseUrl, 'GET', `/v2/${s(first.body.transaction_id)}/status`);
      expect(old.body.order_id).toBe(id);
    }
  });
});

describe('Core status and transitions', () => {
  it('status by order id and by transaction id, with a verifiable signature_key', async () => {
    const id = oid();
    const c = await charge(sim.baseUrl, id);
    for (const key of [id, s(c.body.transaction_id)]) {
      const r = await call(sim.baseUrl, 'GET', `/v2/${key}/status`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        status_code: '201',
        transaction_status: 'pending',
        status_message: 'Success, transaction is found',
        order_id: id,
      });
    }
    const { midtransSignature } = await import('../../simulator/index.js');
    const r = await call(sim.baseUrl, 'GET', `/v2/${id}/status`);
    expect(r.body.signature_key).toBe(midtransSignature(id, '201', '150000.00', 'SB-Mid-server-test-key'));
  });

  it("unknown transaction → 404 Transaction doesn't exist.", async () => {
    const r = await call(sim.baseUrl, 'GET', '/v2/does-not-exist/status');
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ status_code: '404', status_message: "Transaction doesn't exist." });
    for (const a of ['cancel', 'expire', 'refund', 'approve', 'deny']) {
      expect((await call(sim.baseUrl, 'POST', `/v2/does-not-exist/${a}`)).body.status_code).toBe('404');
    }
  });

  it('cancel 200 then 412; expire answers 407 and status stays 407', async () => {
    const id = oid();
    await charge(sim.baseUrl, id);
    const c = await call(sim.baseUrl, 'POST', `/v2/${id}/cancel`);
    expect(c.status).toBe(200);
    expect(c.body).toMatchObject({
      status_code: '200',
      status_message: 'Success, transaction is canceled',
      transaction_status: 'cancel',
    });
    const again = await call(sim.baseUrl, 'POST', `/v2/${id}/cancel`);
    expect(again.status).toBe(412);
    expect(again.body).toMatchObject({
      status_code: '412',
      status_message: 'Merchant cannot modify the status of the transaction',
    });
    const id2 = oid();
    await charge(sim.baseUrl, id2);
    const e = await call(sim.baseUrl, 'POST', `/v2/${id2}/expire`);
    expect(e.status).toBe(200);
    expect(e.body).toMatchObject({
      status_code: '407',
      status_message: 'Success, transaction has expired',
      transaction_status: 'expire',
    });
    const st = await call(sim.baseUrl, 'GET', `/v2/${id2}/status`);
    expect(st.status).toBe(200);
    expect(st.body).toMatchObject({ status_code: '407', transaction_status: 'expire' });
    expect((await call(sim.baseUrl, 'POST', `/v2/${id2}/expire`)).body.status_code).toBe('412');
  });

  it('approve / deny only for a challenged card capture', async () => {
    const id = oid();
    await charge(sim.baseUrl, id);
    expect((await call(sim.baseUrl, 'POST', `/v2/${id}/approve`)).body.status_code).toBe('412');
    expect((await call(sim.baseUrl, 'POST', `/v2/${id}/deny`)).body.status_code).toBe('412');
    const a = oid();
    await charge(sim.baseUrl, a, { payment_type: 'credit_card', credit_card: { token_id: 'challenge-1' } });
    const ok = await call(sim.baseUrl, 'POST', `/v2/${a}/approve`);
    expect(ok.body).toMatchObject({ status_code: '200', transaction_status: 'capture', fraud_status: 'accept' });
    const d = oid();
    await charge(sim.baseUrl, d, { payment_type: 'credit_card', credit_card: { token_id: 'challenge-2' } });
    const denied = await call(sim.baseUrl, 'POST', `/v2/${d}/deny`);
    expect(denied.body).toMatchObject({
      status_code: '200',
      status_message: 'Success, transaction is denied',
      transaction_status: 'deny',
      fraud_status: 'deny',
    });
    expect((await call(sim.baseUrl, 'GET', `/v2/${d}/status`)).body.status_code).toBe('202');
  });

  it('refund: 412 when not settled, partial then full, 414 bad amount, refund_key idempotent, 406 reused elsewhere', async () => {
    const id = oid();
    await charge(sim.baseUrl, id, { payment_type: 'qris' });
    expect((await call(sim.baseUrl, 'POST', `/v2/${id}/refund`, { body: { amount: 1000 } })).body.status_code).toBe(
      '412',
    );
    await call(sim.baseUrl, 'POST', `/_sim/transactions/${id}/pay`, { auth: false });
    const p1 = await call(sim.baseUrl, 'POST', `/v2/${id}/refund`, {
      body: { refund_key: 'rk-1', amount: 50000, reason: 'r' },
    });
    expect(p1.body).toMatchObject({
      status_code: '200',
      status_message: 'Success, refund request is approved',
      transaction_status: 'partial_refund',
      refund_amount: '50000.00',
      refund_key: 'rk-1',
    });
    const replay = await call(sim.baseUrl, 'POST', `/v2/${id}/refund`, { body: { refund_key: 'rk-1', amount: 50000 } });
    expect(replay.body.refund_chargeback_id).toBe(p1.body.refund_chargeback_id);
    expect((await call(sim.baseUrl, 'POST', `/v2/${id}/refund`, { body: { amount: 100001 } })).body.status_code).toBe(
      '414',
    );
    expect((await call(sim.baseUrl, 'POST', `/v2/${id}/refund`, { body: { amount: -5 } })).body.status_code).toBe(
      '414',
    );
    const full = await call(sim.baseUrl, 'POST', `/v2/${id}/refund`, { body: { refund_key: 'rk-2' } });
    expect(full.body).toMatchObject({ transaction_status: 'refund', refund_amount: '100000.00' });
    const st = await call(sim.baseUrl, 'GET', `/v2/${id}/status`);
    expect(st.body).toMatchObject({ transaction_status: 'refund', refund_amount: '150000.00' });
    expect(arr(st.body.refunds)).toHaveLength(2);
    const other = oid();
    await charge(sim.baseUrl, other, { payment_type: 'gopay' });
    await call(sim.baseUrl, 'POST', `/_sim/transactions/${other}/pay`, { auth: false });
    expect(
      (await call(sim.baseUrl, 'POST', `/v2/${other}/refund`, { body: { refund_key: 'rk-1' } })).body.status_code,
    ).toBe('406');
  });

  it('refund of a settled bank transfer is refused (no online refund for VA)', async () => {
    const id = oid();
    await charge(sim.baseUrl, id);
    await call(sim.baseUrl, 'POST', `/_sim/transactions/${id}/pay`, { auth: false });
    expect((await call(sim.baseUrl, 'POST', `/v2/${id}/refund`, { body: {} })).body.status_code).toBe('412');
  });
});

describe('Idempotency-Key', () => {
  it('replays the first success regardless of body; longer keys are ignored; failures are not stored', async () => {
    const key = `idem-${oid()}`;
    const id = oid();
    const a = await charge(sim.baseUrl, id, {}, { 'idempotency-key': key });
    const b = await call(sim.baseUrl, 'POST', '/v2/charge', {
      body: chargeBody(oid()),
      headers: { 'idempotency-key': key },
    });
    expect(b.body).toEqual(a.body);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    const long = 'k'.repeat(47);
    const l1 = await charge(sim.baseUrl, oid(), {}, { 'idempotency-key': long });
    const l2 = await charge(sim.baseUrl, oid(), {}, { 'idempotency-key': long });
    expect(l2.body.transaction_id).not.toBe(l1.body.transaction_id);
    const failKey = `fail-${oid()}`;
    const bad = await call(sim.baseUrl, 'POST', '/v2/charge', {
      body: chargeBody(oid(), 0),
      headers: { 'idempotency-key': failKey },
    });
    expect(bad.status).toBe(400);
    const good = await charge(sim.baseUrl, oid(), {}, { 'idempotency-key': failKey });
    expect(good.body.status_code).toBe('201');
  });

  it('the key namespace is global across endpoints', async () => {
    const key = `glob-${oid()}`;
    const id = oid();
    const c = await charge(sim.baseUrl, id, {}, { 'idempotency-key': key });
    const other = await call(sim.baseUrl, 'POST', `/v2/${id}/cancel`, { headers: { 'idempotency-key': key } });
    expect(other.body).toEqual(c.body);
    expect((await call(sim.baseUrl, 'GET', `/v2/${id}/status`)).body.transaction_status).toBe('pending');
  });
});
