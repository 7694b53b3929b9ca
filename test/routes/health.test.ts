import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { makeTestApp, type TestContext } from '../helpers/services.js';

describe.each(DATABASE_KINDS)('GET /health and HTTP edge behaviour (%s)', (kind) => {
  let ctx: TestContext;
  beforeEach(async () => {
    ctx = await makeTestApp(kind, {}, { simulatorBaseUrl: 'http://127.0.0.1:9' });
    // A probe route to exercise body parsing and the error handler before feature routes exist.
    ctx.app.post('/__probe', { config: { auth: 'none' } }, async (req) => ({ got: req.body }));
  });
  afterEach(async () => ctx.close());

  it('answers 200 with database and gateway checks and a request id', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const body = res.json();
    expect(body).toMatchObject({
      status: 'ok',
      checks: { database: { status: 'ok', kind }, gateway: { mode: 'simulator', base_url: 'http://127.0.0.1:9' } },
      version: expect.any(String),
    });
    expect(body.uptime_s).toBeGreaterThanOrEqual(0);
  });

  it('echoes a well-formed incoming x-request-id and replaces a malformed one', async () => {
    expect(
      (await ctx.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'erp-42' } })).headers[
        'x-request-id'
      ],
    ).toBe('erp-42');
    expect(
      (await ctx.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'bad id\u0001' } })).headers[
        'x-request-id'
      ],
    ).not.toBe('bad id\u0001');
  });

  it('answers 503 when the database is unreachable', async () => {
    await ctx.services.store.close();
    const res = await ctx.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ status: 'unavailable', checks: { database: { status: 'unavailable' } } });
    // the gateway the environment names is still shown
    expect(res.json().checks.gateway).toMatchObject({
      status: 'unknown',
      mode: 'simulator',
      base_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
    });
  });

  it('unknown paths are problem+json 404s', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/no/such/thing' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 404, code: 'NOT_FOUND', request_id: res.headers['x-request-id'] });
  });

  it('malformed URLs and over-long path segments are problem+json 400s with a request id, the URL not echoed', async () => {
    for (const url of ['/%', '/api/payment-links/%E0%A4%A', `/api/payment-links/${'A'.repeat(600)}`]) {
      const res = await ctx.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.headers['x-request-id']).toBeTruthy();
      expect(res.json()).toMatchObject({
        code: 'VALIDATION_FAILED',
        status: 400,
        request_id: res.headers['x-request-id'],
      });
      expect(res.body).not.toContain('AAAAAAAAAA');
    }
  });

  it('bad JSON is a 400 INVALID_JSON, never a 500', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/__probe',
      headers: { 'content-type': 'application/json' },
      payload: '{"a":',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'INVALID_JSON', status: 400 });
  });

  it('prototype poisoning is refused with 400', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/__probe',
      headers: { 'content-type': 'application/json' },
      payload: '{"__proto__":{"x":1}}',
    });
    expect(res.statusCode).toBe(400);
  });

  it('oversized bodies are 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/__probe',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ a: 'x'.repeat(300 * 1024) }),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });

  it('a wrong content type is 415', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/__probe',
      headers: { 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
  });
});
