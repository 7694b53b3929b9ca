import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth, makeTestApp, OPERATOR, type TestContext } from '../helpers/services.js';
import { patchRuntimeConfig } from '../helpers/seed.js';

const op = { authorization: basicAuth() };
const API_KEY = 'erp-key-echo-0123456789';
const ERP_SECRET = 'whsec_ZWNoby1lcnAtc2VjcmV0LXZhbHVlLTAx';
const RUNTIME_CLIENT_KEY = 'SB-Mid-client-runtime-9f8e7d';
const SERVER_KEY = 'SB-Mid-server-echo-env-4c3b2a';
const CLIENT_KEY = 'SB-Mid-client-echo-env-1a2b3c';
const RUNTIME_SERVER_KEY = 'SB-Mid-server-runtime-7e6d5c';
const RUNTIME_ERP_SECRET = 'whsec_cnVudGltZS1lcnAtc2VjcmV0LTAy';
/** The form the gateway's server key travels in: `Authorization: Basic base64(key:)`. */
const basicForm = (key: string) => Buffer.from(`${key}:`).toString('base64');

describe.each(DATABASE_KINDS)('a wrong method on an existing path (%s)', (kind) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await makeTestApp(kind, { LOG_EXPOSE_API: 'true' }, { simulatorBaseUrl: 'http://127.0.0.1:9' });
  });
  afterAll(async () => ctx.close());

  it.each([
    ['DELETE', '/api/config', 'GET, HEAD, POST'],
    ['PUT', '/api/payment-links/SO-1', 'DELETE, GET, HEAD'],
    ['GET', '/api/payment-links', 'POST'],
    ['GET', '/webhook/midtrans', 'POST'],
    ['POST', '/health', 'GET, HEAD'],
    ['PUT', '/api/deliveries/5/retry', 'POST'],
  ])('%s %s → 405 problem+json with Allow: %s', async (method, url, allow) => {
    const res = await ctx.app.inject({ method: method as 'GET', url, headers: op });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe(allow);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({
      code: 'METHOD_NOT_ALLOWED',
      status: 405,
      request_id: res.headers['x-request-id'],
    });
  });

  it.each([
    ['GET', '/api/nothing-here'],
    ['GET', '/api/config/'],
    ['GET', '/api/payment-links/SO-1/extra'],
  ])('%s %s (no route for any method) stays 404', async (method, url) => {
    const res = await ctx.app.inject({ method: method as 'GET', url, headers: op });
    expect(res.statusCode).toBe(404);
    expect(res.headers.allow).toBeUndefined();
  });
});

describe('/echo hides configured secrets by value, wherever they appear', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    const env = {
      LOG_EXPOSE_API: 'true',
      API_KEYS: API_KEY,
      ERP_WEBHOOK_SECRET: ERP_SECRET,
      MIDTRANS_MODE: 'simulator',
      MIDTRANS_SERVER_KEY: SERVER_KEY,
      MIDTRANS_CLIENT_KEY: CLIENT_KEY,
    };
    ctx = await makeTestApp('sqlite', env, { simulatorBaseUrl: 'http://127.0.0.1:9', runtimeConfigCacheMs: 0 });
    await patchRuntimeConfig(ctx.services.runtimeConfig, {
      gateway: { client_key: RUNTIME_CLIENT_KEY, server_key: RUNTIME_SERVER_KEY },
      erp: { webhook_secret: RUNTIME_ERP_SECRET },
    });
  });
  afterAll(async () => ctx.close());

  it('in the body, the query, headers and the path: none of the values comes back', async () => {
    const all = [
      API_KEY,
      ERP_SECRET,
      RUNTIME_CLIENT_KEY,
      OPERATOR.pass,
      SERVER_KEY,
      basicForm(SERVER_KEY),
      CLIENT_KEY,
      RUNTIME_SERVER_KEY,
      RUNTIME_ERP_SECRET,
    ];
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/echo?note=${encodeURIComponent(`key ${API_KEY}`)}&${encodeURIComponent(RUNTIME_CLIENT_KEY)}=1&gw=${SERVER_KEY}`,
      headers: {
        ...op,
        'x-note': `secret ${ERP_SECRET}`,
        'x-gateway': `Basic ${basicForm(SERVER_KEY)}`,
        'content-type': 'application/json',
      },
      payload: {
        comment: `pasted ${RUNTIME_CLIENT_KEY} here`,
        nested: [
          { text: OPERATOR.pass },
          { text: CLIENT_KEY },
          { text: `${RUNTIME_SERVER_KEY} / ${RUNTIME_ERP_SECRET}` },
        ],
        [OPERATOR.pass]: 'as a key',
      },
    });
    expect(res.statusCode).toBe(200);
    for (const secret of all) expect(res.body).not.toContain(secret);
    const body = res.json();
    expect(body.body.comment).toBe('pasted [redacted] here');
    expect(body.body.nested).toEqual([
      { text: '[redacted]' },
      { text: '[redacted]' },
      { text: '[redacted] / [redacted]' },
    ]);
    expect(body.query).toMatchObject({ note: 'key [redacted]', gw: '[redacted]' });
    expect(body.headers['x-note']).toBe('secret [redacted]');
    expect(body.headers['x-gateway']).toBe('Basic [redacted]');
    expect(body.body['[redacted]']).toBe('as a key');
  });
});
