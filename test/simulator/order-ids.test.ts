import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../simulator/index.js';
import { call, oid, s, start } from './helpers.js';

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await start();
});
afterAll(async () => {
  await sim.close();
});

let n = 0;
/** A fresh order id that is a JSON number (safe integer). */
function numericId(): number {
  n += 1;
  return Date.now() * 1000 + n;
}

describe('numeric order_id: the gateway reads a JSON number as the string of its digits', () => {
  it('Core charge, status by that string, and the duplicate check on it', async () => {
    const id = numericId();
    const r = await call(sim.baseUrl, 'POST', '/v2/charge', {
      body: {
        payment_type: 'bank_transfer',
        bank_transfer: { bank: 'bca' },
        transaction_details: { order_id: id, gross_amount: 10000 },
      },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status_code: '201', order_id: String(id), transaction_status: 'pending' });
    const st = await call(sim.baseUrl, 'GET', `/v2/${id}/status`);
    expect(st.body).toMatchObject({ status_code: '201', order_id: String(id) });
    const again = await call(sim.baseUrl, 'POST', '/v2/charge', {
      body: { payment_type: 'gopay', transaction_details: { order_id: String(id), gross_amount: 10000 } },
    });
    expect(again.body.status_code).toBe('406');
  });

  it('Snap and Payment Link accept it too', async () => {
    const snapId = numericId();
    const snap = await call(sim.baseUrl, 'POST', '/snap/v1/transactions', {
      body: { transaction_details: { order_id: snapId, gross_amount: 10000 } },
    });
    expect(snap.status).toBe(201);
    expect(s(snap.body.token)).toMatch(/^[0-9a-f-]{36}$/);
    const paid = await call(sim.baseUrl, 'POST', `/_sim/transactions/${s(snap.body.token)}/pay`, {
      auth: false,
      body: { payment_type: 'gopay' },
    });
    expect(paid.body).toMatchObject({ order_id: String(snapId), transaction_status: 'settlement' });
    const st = await call(sim.baseUrl, 'GET', `/v2/${snapId}/status`);
    expect(st.status).toBe(200);
    expect(st.body).toMatchObject({ order_id: String(snapId), transaction_status: 'settlement' });
    expect(typeof st.body.order_id).toBe('string');
    const linkId = numericId();
    const link = await call(sim.baseUrl, 'POST', '/v1/payment-links', {
      body: { transaction_details: { order_id: linkId, gross_amount: 10000 } },
    });
    expect(link.status).toBe(200);
    expect(link.body.order_id).toBe(String(linkId));
    const details = await call(sim.baseUrl, 'GET', `/v1/payment-links/${linkId}`);
    expect(details.body.order_id).toBe(String(linkId));
  });

  it('a number that is not a whole non-negative integer is refused as "must be a string", not "is required"', async () => {
    for (const bad of [1.5, -3]) {
      const r = await call(sim.baseUrl, 'POST', '/v2/charge', {
        body: { payment_type: 'gopay', transaction_details: { order_id: bad, gross_amount: 10000 } },
      });
      expect(r.status).toBe(400);
      expect(r.body.validation_messages).toEqual(['transaction_details.order_id must be a string']);
    }
  });
});

describe('each API keeps its own order_id rule', () => {
  it('Snap accepts spaces and ":" (as in the client libraries\' tests); Core and Payment Link refuse them', async () => {
    const id = `test-${Date.now()} 12:34:56`;
    const snap = await call(sim.baseUrl, 'POST', '/snap/v1/transactions', {
      body: { transaction_details: { order_id: id, gross_amount: 10000 } },
    });
    expect(snap.status).toBe(201);
    const core = await call(sim.baseUrl, 'POST', '/v2/charge', {
      body: { payment_type: 'gopay', transaction_details: { order_id: id, gross_amount: 10000 } },
    });
    expect(core.status).toBe(400);
    expect(JSON.stringify(core.body.validation_messages)).toContain('order_id contains invalid characters');
    const link = await call(sim.baseUrl, 'POST', '/v1/payment-links', {
      body: { transaction_details: { order_id: id, gross_amount: 10000 } },
    });
    expect(link.status).toBe(400);
    expect(JSON.stringify(link.body.error_messages)).toContain('order_id contains invalid characters');
  });

  it('a Snap order id with a space is paid through its page and found by status under that id', async () => {
    const id = `snap ${oid()}:00`;
    const snap = await call(sim.baseUrl, 'POST', '/snap/v1/transactions', {
      body: { transaction_details: { order_id: id, gross_amount: 10000 } },
    });
    const paid = await call(sim.baseUrl, 'POST', `/_sim/transactions/${s(snap.body.token)}/pay`, {
      auth: false,
      body: { payment_type: 'gopay' },
    });
    expect(paid.body).toMatchObject({ order_id: id, transaction_status: 'settlement' });
    const st = await call(sim.baseUrl, 'GET', `/v2/${encodeURIComponent(id)}/status`);
    expect(st.body).toMatchObject({ order_id: id, transaction_status: 'settlement' });
  });

  it('Snap still refuses control characters and more than 50 characters', async () => {
    for (const [id, text] of [
      ['a\u0001b', 'invalid characters'],
      ['x'.repeat(51), 'too long'],
    ] as const) {
      const r = await call(sim.baseUrl, 'POST', '/snap/v1/transactions', {
        body: { transaction_details: { order_id: id, gross_amount: 10000 } },
      });
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.body.error_messages)).toContain(text);
    }
  });
});

describe('a charge body that is not a JSON object', () => {
  it('null, an array, a number or a string answer the gateway\'s "unexpected" 500', async () => {
    for (const raw of ['null', '[]', '[{"payment_type":"gopay"}]', '42', '"charge"', 'true']) {
      const r = await call(sim.baseUrl, 'POST', '/v2/charge', { raw });
      expect(r.status).toBe(500);
      expect(r.body).toMatchObject({
        status_code: '500',
        status_message: 'Sorry. Our system is recovering from unexpected issues. Please retry.',
      });
      expect(typeof r.body.id).toBe('string');
    }
  });

  it('the body is read as JSON whatever its content type: a null sent as text/plain is the same 500', async () => {
    for (const type of ['text/plain', 'application/octet-stream']) {
      for (const raw of ['null', '[]', '7']) {
        const r = await call(sim.baseUrl, 'POST', '/v2/charge', { raw, headers: { 'content-type': type } });
        expect(r.status).toBe(500);
        expect(r.body).toMatchObject({ status_code: '500', status_message: expect.stringContaining('unexpected') });
      }
    }
  });

  it('text that is not JSON is malformed JSON whatever its content type (HTTP 400, body code "413")', async () => {
    for (const type of ['application/json', 'text/plain']) {
      const r = await call(sim.baseUrl, 'POST', '/v2/charge', { raw: 'plain text', headers: { 'content-type': type } });
      expect(r.status).toBe(400);
      expect(r.body.status_code).toBe('413');
    }
  });

  it('an empty body stays a validation answer (400), as the Node client expects for charge(null)', async () => {
    const r = await call(sim.baseUrl, 'POST', '/v2/charge', {
      raw: '',
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(400);
    expect(r.body.status_code).toBe('400');
  });
});
