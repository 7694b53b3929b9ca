import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth, makeTestApp, type TestContext } from '../helpers/services.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig } from '../helpers/seed.js';

const SECRET = `whsec_${Buffer.from('dev-test-secret-0123456789abcdef').toString('base64')}`;

describe.each(DATABASE_KINDS)('POST /test-notify-erp (%s)', (kind) => {
  let ctx: TestContext | undefined;
  let erp: ErpReceiver;
  const auth = { authorization: basicAuth() };
  beforeEach(async () => {
    erp = await startErpReceiver({ secret: SECRET });
  });
  afterEach(async () => {
    await ctx?.close();
    ctx = undefined;
    await erp.close();
  });

  it('is 404 exactly like an unknown path when the Dev/Test API is off', async () => {
    ctx = await makeTestApp(kind, {}, { simulatorBaseUrl: 'http://127.0.0.1:9' });
    const res = await ctx.app.inject({ method: 'POST', url: '/test-notify-erp', headers: auth, payload: {} });
    const unknown = await ctx.app.inject({ method: 'POST', url: '/no-such-thing', headers: auth, payload: {} });
    expect(res.statusCode).toBe(404);
    expect({ ...res.json(), detail: '', request_id: '' }).toEqual({ ...unknown.json(), detail: '', request_id: '' });
  });

  it('sends a marked test event through the outbox and reports the first attempt', async () => {
    ctx = await makeTestApp(
      kind,
      { LOG_EXPOSE_API: 'true' },
      { simulatorBaseUrl: 'http://127.0.0.1:9', runtimeConfigCacheMs: 0 },
    );
    await patchRuntimeConfig(ctx.services.runtimeConfig, {
      erp: { notify_url: erp.url, webhook_secret: SECRET, timeout_ms: 2_000 },
    });
    ctx.services.outbox.start();
    expect((await ctx.app.inject({ method: 'POST', url: '/test-notify-erp', payload: {} })).statusCode).toBe(401);
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/test-notify-erp',
      headers: auth,
      payload: { order_id: 'SO-9:1', status: 'expired' },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ outcome: 'delivered', state: 'delivered', http_status: 200, error: null });
    expect(erp.accepted()).toHaveLength(1);
    expect(erp.accepted()[0]).toMatchObject({ webhookId: body.event_id, verified: true });
    expect(erp.accepted()[0]?.json).toMatchObject({
      type: 'payment.test',
      test: true,
      mercant_id: 'SO-9',
      order_id: 'SO-9:1',
      status: 'expired',
    });
    // no body at all works too; a failing ERP is reported, not hidden
    erp.setMode({ kind: 'fail', status: 500 });
    const failing = await ctx.app.inject({ method: 'POST', url: '/test-notify-erp', headers: auth });
    expect(failing.statusCode).toBe(200);
    expect(failing.json()).toMatchObject({ outcome: 'failed', state: 'failed', http_status: 500, error: 'HTTP 500' });
    const bad = await ctx.app.inject({
      method: 'POST',
      url: '/test-notify-erp',
      headers: auth,
      payload: { status: 'nope' },
    });
    expect(bad.statusCode).toBe(400);
  });

  it('a test event can never say paid: pending by default, paid refused', async () => {
    ctx = await makeTestApp(
      kind,
      { LOG_EXPOSE_API: 'true' },
      { simulatorBaseUrl: 'http://127.0.0.1:9', runtimeConfigCacheMs: 0 },
    );
    await patchRuntimeConfig(ctx.services.runtimeConfig, {
      erp: { notify_url: erp.url, webhook_secret: SECRET, timeout_ms: 2_000 },
    });
    ctx.services.outbox.start();
    const res = await ctx.app.inject({ method: 'POST', url: '/test-notify-erp', headers: auth, payload: {} });
    expect(res.json()).toMatchObject({ outcome: 'delivered' });
    expect(erp.accepted()[0]?.json).toMatchObject({
      type: 'payment.test',
      test: true,
      status: 'pending',
      gross_amount: 0,
    });
    const paid = await ctx.app.inject({
      method: 'POST',
      url: '/test-notify-erp',
      headers: auth,
      payload: { status: 'paid' },
    });
    expect(paid.statusCode).toBe(400);
    expect(paid.json().errors).toEqual([
      { path: 'status', message: expect.stringMatching(/^must be one of: pending, challenge/) },
    ]);
    expect(paid.json().errors[0].message).not.toMatch(/\bpaid\b/);
    expect(erp.accepted()).toHaveLength(1);
  });

  it('with no ERP URL the event waits and the answer says so', async () => {
    ctx = await makeTestApp(
      kind,
      { LOG_EXPOSE_API: 'true' },
      { simulatorBaseUrl: 'http://127.0.0.1:9', runtimeConfigCacheMs: 0 },
    );
    const res = await ctx.app.inject({ method: 'POST', url: '/test-notify-erp', headers: auth, payload: {} });
    expect(res.json()).toMatchObject({ outcome: 'pending', state: 'pending', http_status: null });
    expect(res.json().error).toMatch(/notify_url/);
  });
});
