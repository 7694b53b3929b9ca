/** `GET /`: a page of links for a browser, the same links as JSON for a client; never a 404. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';

describe('GET /', () => {
  let ctx: LoggedApp;
  beforeAll(async () => {
    ctx = await makeLoggedApp('sqlite', { API_KEYS: 'home-test-api-key-0123456789' });
  });
  afterAll(async () => ctx.close());

  it('a browser gets an HTML page linking the console and the reference', async () => {
    const res = await ctx.app.inject({
      method: 'GET',
      url: '/',
      headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers.vary).toMatch(/Accept/);
    expect(res.body).toContain('href="/console"');
    expect(res.body).toContain('href="/docs"');
  });

  it('any other client gets the links as JSON, without credentials', async () => {
    for (const accept of [undefined, 'application/json', '*/*', 'text/html;q=0']) {
      const res = await ctx.app.inject({ method: 'GET', url: '/', headers: accept ? { accept } : {} });
      expect(res.statusCode, accept).toBe(200);
      expect(res.headers['content-type'], accept).toMatch(/^application\/json/);
      expect(res.json()).toEqual({
        service: 'paylink',
        links: { console: '/console', docs: '/docs', openapi: '/openapi.json', health: '/health' },
      });
    }
  });

  it('HEAD answers too, and an unknown query parameter is a 400, not a 404', async () => {
    expect((await ctx.app.inject({ method: 'HEAD', url: '/' })).statusCode).toBe(200);
    expect((await ctx.app.inject({ method: 'GET', url: '/?x=1' })).statusCode).toBe(400);
  });
});
