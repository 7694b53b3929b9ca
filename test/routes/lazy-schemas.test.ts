/**
 * Route validators and serializers are compiled on their first use (src/http/lazy-compilers.ts):
 * the first request on a route still validates and serializes by its schemas, every schema of the
 * app compiles, and header schemas are matched on lower-cased names as Fastify's own setup does.
 */
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import { compileRouteSchemas, lazySchemaController, trackSchemas } from '../../src/http/lazy-compilers.js';
import { DATABASE_KINDS } from '../helpers/stores.js';

const KEY = 'lazy-schemas-key-0123456789abcdef';

describe.each(DATABASE_KINDS)('route schemas compiled on first use (%s)', (kind) => {
  let ctx: LoggedApp;
  beforeAll(async () => {
    ctx = await makeLoggedApp(kind, { API_KEYS: KEY, LOG_EXPOSE_API: 'true' });
  });
  afterAll(async () => ctx.close());

  it("a route's first request is validated by its schema", async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/charge',
      payload: JSON.stringify({ order_id: 'LZ-1', nominal: 'a lot', payment_type: 'qris' }),
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([expect.objectContaining({ path: 'nominal' })]);
  });

  it('every schema of the app compiles', () => {
    expect(compileRouteSchemas(ctx.app)).toBeGreaterThan(50);
    expect(compileRouteSchemas(ctx.app)).toBe(0);
  });
});

describe('lazy compilers', () => {
  const schemas = lazySchemaController();
  const app = Fastify({ schemaController: schemas.option });
  trackSchemas(app, schemas);
  app.get(
    '/h',
    {
      schema: {
        headers: {
          type: 'object',
          properties: { 'X-Thing': { type: 'string', maxLength: 3 } },
          required: ['X-Thing'],
        },
        response: {
          200: { type: 'object', properties: { shown: { type: 'string' } }, additionalProperties: false },
        },
      },
    },
    async () => ({ shown: 'yes', hidden: 'no' }),
  );
  beforeAll(() => app.ready());
  afterAll(() => app.close());

  it('matches header schemas on lower-cased names, and serializes by the response schema', async () => {
    expect((await app.inject({ url: '/h' })).statusCode).toBe(400);
    const long = await app.inject({ url: '/h', headers: { 'x-thing': 'abcd' } });
    expect(long.statusCode).toBe(400);
    expect(long.json().message).toMatch(/x-thing/);
    const ok = await app.inject({ url: '/h', headers: { 'X-Thing': 'ab' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toBe('{"shown":"yes"}');
  });

  it('compiles what was not used yet', () => {
    // GET's validator and serializer were compiled by the requests above; Fastify's HEAD route for
    // it has its own two, not used yet.
    expect(compileRouteSchemas(app)).toBe(2);
    expect(compileRouteSchemas(app)).toBe(0);
  });
});
