import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth, makeTestApp, type TestContext } from '../helpers/services.js';

const auth = { authorization: basicAuth() };
const DEV_PATHS = ['/echo', '/echo2', '/test-notify-erp'];

/** A 404 body with the parts that name the request (id, path) blanked. */
function shape(body: Record<string, unknown>, path: string) {
  return { ...body, request_id: '-', detail: String(body.detail).replace(path, '<path>') };
}

describe.each(DATABASE_KINDS)('Dev/Test endpoints with LOG_EXPOSE_API off (%s)', (kind) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await makeTestApp(kind, {}, { simulatorBaseUrl: 'http://127.0.0.1:9' });
  });
  afterAll(async () => ctx.close());

  it('answers every Dev/Test path exactly like an unknown path, with or without credentials', async () => {
    for (const path of DEV_PATHS) {
      for (const method of ['GET', 'POST', 'PUT', 'DELETE'] as const) {
        for (const headers of [{}, auth]) {
          const res = await ctx.app.inject({
            method,
            url: path,
            headers: { ...headers, 'content-type': 'application/json' },
            payload: method === 'GET' ? undefined : '{}',
          });
          const unknown = await ctx.app.inject({
            method,
            url: `${path}-nope`,
            headers: { ...headers, 'content-type': 'application/json' },
            payload: method === 'GET' ? undefined : '{}',
          });
          expect(res.statusCode, `${method} ${path}`).toBe(404);
          expect(res.headers['content-type']).toBe(unknown.headers['content-type']);
          expect(Object.keys(res.headers).sort()).toEqual(Object.keys(unknown.headers).sort());
          expect(shape(res.json(), path)).toEqual(shape(unknown.json(), `${path}-nope`));
        }
      }
    }
  });
});

describe.each(DATABASE_KINDS)('Dev/Test endpoints with LOG_EXPOSE_API on (%s)', (kind) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await makeTestApp(kind, { LOG_EXPOSE_API: 'yes' }, { simulatorBaseUrl: 'http://127.0.0.1:9' });
  });
  afterAll(async () => ctx.close());

  it('still requires operator credentials', async () => {
    for (const path of DEV_PATHS) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: path,
        headers: { 'content-type': 'application/json' },
        payload: '{}',
      });
      expect(res.statusCode, path).toBe(401);
    }
  });

  it('/echo answers {method, path, query, headers, body} with credentials redacted', async () => {
    const res = await ctx.app.inject({
      method: 'PUT',
      url: '/echo?a=1&b=two',
      headers: {
        ...auth,
        'x-api-key': 'k-secret',
        cookie: 'sid=secret',
        'x-custom': 'kept',
        'content-type': 'application/json',
      },
      payload: { nested: { n: 1 }, list: [1, 'x'] },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      method: 'PUT',
      path: '/echo',
      query: { a: '1', b: 'two' },
      body: { nested: { n: 1 }, list: [1, 'x'] },
    });
    expect(body.headers).toMatchObject({
      authorization: '[redacted]',
      'x-api-key': '[redacted]',
      cookie: '[redacted]',
      'x-custom': 'kept',
    });
    expect(res.body).not.toContain('secret');
    expect(res.body).not.toContain(auth.authorization.slice(6));
    const get = await ctx.app.inject({ method: 'GET', url: '/echo', headers: auth });
    expect(get.json()).toMatchObject({ method: 'GET', path: '/echo', query: {}, body: null });
    // secret-looking fields of the query and the body, at any depth
    const fields = await ctx.app.inject({
      method: 'POST',
      url: '/echo?token=q-hush-1&page=2',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: {
        gateway: { server_key: 'SB-Mid-server-hush-2', mode: 'sandbox' },
        items: [{ password: 'hush-3', name: 'n' }],
        signature_key: 'hush-4',
      },
    });
    expect(fields.json()).toMatchObject({
      query: { token: '[redacted]', page: '2' },
      body: {
        gateway: { server_key: '[redacted]', mode: 'sandbox' },
        items: [{ password: '[redacted]', name: 'n' }],
        signature_key: '[redacted]',
      },
    });
    expect(fields.body).not.toContain('hush');
  });

  it('/echo2 answers the raw body bytes with the request content type', async () => {
    const bytes = Buffer.from([0, 1, 2, 255, 254, 10, 13, 0x7b]);
    const bin = await ctx.app.inject({
      method: 'POST',
      url: '/echo2',
      headers: { ...auth, 'content-type': 'application/octet-stream' },
      payload: bytes,
    });
    expect(bin.statusCode).toBe(200);
    expect(bin.headers['content-type']).toBe('application/octet-stream');
    expect(Buffer.compare(bin.rawPayload, bytes)).toBe(0);
    const json = '{ "a" : 1,  "b":[ ] }';
    const j = await ctx.app.inject({
      method: 'PUT',
      url: '/echo2',
      headers: { ...auth, 'content-type': 'application/json; charset=utf-8' },
      payload: json,
    });
    expect(j.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(j.body).toBe(json);
    const html = await ctx.app.inject({
      method: 'POST',
      url: '/echo2',
      headers: { ...auth, 'content-type': 'text/html' },
      payload: '<script>alert(1)</script>',
    });
    expect(html.body).toBe('<script>alert(1)</script>');
    expect(html.headers['x-content-type-options']).toBe('nosniff');
    expect(html.headers['content-security-policy']).toContain('sandbox');
  });

  it('the raw parser stays inside /echo2: other routes still refuse non-JSON bodies', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/echo',
      headers: { ...auth, 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(res.statusCode).toBe(415);
    const cfg = await ctx.app.inject({
      method: 'POST',
      url: '/api/config',
      headers: { ...auth, 'content-type': 'application/octet-stream' },
      payload: 'x',
    });
    expect(cfg.statusCode).toBe(415);
  });
});
