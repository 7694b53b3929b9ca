/**
 * Who may read the description and its rendered reference: the operator (Basic) and, when API_KEYS
 * is set, the ERP's API keys; what it lists: the groups this instance serves, operator-only
 * operations marked as such, and this service's public address as the server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth } from '../helpers/services.js';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import { OPERATOR_ONLY } from '../../src/http/openapi.js';
import { TAGS } from '../../src/http/types.js';

const KEY = 'docs-access-api-key-0123456789';
type Json = Record<string, unknown>;
type Op = { description?: string; security?: Array<Record<string, unknown>>; responses?: Record<string, unknown> };

describe('/openapi.json and /docs for API keys and the operator', () => {
  let ctx: LoggedApp;
  beforeAll(async () => {
    ctx = await makeLoggedApp('sqlite', { API_KEYS: KEY, PUBLIC_BASE_URL: 'https://pay.example.test/' });
  });
  afterAll(async () => ctx.close());

  for (const url of ['/openapi.json', '/docs', '/docs/init.js', '/docs/docs.css']) {
    it(`${url} answers an API key (Bearer and X-API-Key) and the operator`, async () => {
      for (const headers of [
        { authorization: `Bearer ${KEY}` },
        { 'x-api-key': KEY },
        { authorization: basicAuth() },
      ]) {
        const res = await ctx.app.inject({ method: 'GET', url, headers });
        expect(res.statusCode, JSON.stringify(headers)).toBe(200);
      }
    });
    it(`${url} refuses no credentials, a wrong key and a wrong password`, async () => {
      for (const headers of [
        {},
        { authorization: 'Bearer wrong-key-wrong-key-wrong' },
        { 'x-api-key': 'wrong-key-wrong-key' },
        { authorization: basicAuth('ops', 'wrong') },
      ]) {
        const res = await ctx.app.inject({ method: 'GET', url, headers });
        expect(res.statusCode, JSON.stringify(headers)).toBe(401);
      }
    });
  }

  it('an API key opens the description only, not the operator operations', async () => {
    const res = await ctx.app.inject({
      method: 'GET',
      url: '/api/transactions',
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(res.statusCode).toBe(401);
  });

  it('marks operator-only operations, documents who may read the description, and names this service as the server', async () => {
    const doc = (
      await ctx.app.inject({ method: 'GET', url: '/openapi.json', headers: { 'x-api-key': KEY } })
    ).json<Json>();
    expect(doc.servers).toEqual([{ url: 'https://pay.example.test', description: expect.any(String) }]);
    const paths = doc.paths as Record<string, Record<string, Op>>;
    const ops = Object.values(paths).flatMap((item) => Object.values(item));
    const operatorOnly = ops.filter((op) => JSON.stringify(op.security) === JSON.stringify([{ operatorBasic: [] }]));
    expect(operatorOnly.length).toBeGreaterThan(5);
    for (const op of operatorOnly) expect(op.description?.startsWith(OPERATOR_ONLY)).toBe(true);
    for (const op of ops.filter((o) => !operatorOnly.includes(o)))
      expect(op.description ?? '').not.toContain(OPERATOR_ONLY);
    expect(paths['/openapi.json']?.get?.security).toEqual([
      { operatorBasic: [] },
      { apiKeyBearer: [] },
      { apiKeyHeader: [] },
    ]);
    expect(paths['/openapi.json']?.get?.responses?.['401']).toBeDefined();
    // Without LOG_EXPOSE_API the Dev/Test group is neither served nor listed.
    const tags = (doc.tags as Array<{ name: string }>).map((t) => t.name);
    expect(tags).not.toContain(TAGS.dev);
    expect(tags).toContain(TAGS.links);
  });
});

describe('/openapi.json without API_KEYS', () => {
  let ctx: LoggedApp;
  beforeAll(async () => {
    ctx = await makeLoggedApp('sqlite', { LOG_EXPOSE_API: 'true' });
  });
  afterAll(async () => ctx.close());

  it('is as open as the ERP endpoints (any or no credentials), and lists Dev/Test when it is served', async () => {
    for (const headers of [{}, { authorization: 'Bearer anything-at-all' }, { authorization: basicAuth() }]) {
      const res = await ctx.app.inject({ method: 'GET', url: '/openapi.json', headers });
      expect(res.statusCode, JSON.stringify(headers)).toBe(200);
      expect((res.json<Json>().tags as Array<{ name: string }>).map((t) => t.name)).toContain(TAGS.dev);
    }
  });
});

describe('/openapi.json and /docs while the ERP endpoints are open (API_KEYS empty)', () => {
  let ctx: LoggedApp;
  beforeAll(async () => {
    ctx = await makeLoggedApp('sqlite', {});
  });
  afterAll(async () => ctx.close());

  for (const url of ['/openapi.json', '/docs', '/docs/init.js', '/docs/docs.css'])
    it(`${url} answers without credentials, as /createtransaksi does`, async () => {
      const res = await ctx.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
    });

  it('the ERP endpoints are indeed open, the operator operations are not, and the description says so', async () => {
    const open = await ctx.app.inject({ method: 'POST', url: '/createtransaksi', payload: {} });
    expect(open.statusCode).toBe(400);
    expect((await ctx.app.inject({ method: 'GET', url: '/api/transactions' })).statusCode).toBe(401);
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json<Json>();
    const paths = doc.paths as Record<string, Record<string, Op>>;
    expect(paths['/openapi.json']?.get?.security).toEqual([]);
    expect(paths['/api/transactions']?.get?.security).toEqual([{ operatorBasic: [] }]);
  });
});
