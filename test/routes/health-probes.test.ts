/** GET /health/live and /health/ready: what an orchestrator or load balancer asks. */
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { requestWhileClosing } from '../helpers/shutdown.js';
import { makeTestApp, type TestContext } from '../helpers/services.js';

describe.each(DATABASE_KINDS)('health probes (%s)', (kind) => {
  let ctx: TestContext;
  beforeEach(async () => {
    ctx = await makeTestApp(kind, {}, { simulatorBaseUrl: 'http://127.0.0.1:9' });
  });
  afterEach(async () => ctx.close());

  it("/health reports package.json's version", async () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8')) as {
      version: string;
    };
    expect((await ctx.app.inject({ method: 'GET', url: '/health' })).json()).toMatchObject({ version: pkg.version });
  });

  it('liveness answers 200 without credentials', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/health/live' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'live' });
  });

  it('readiness answers 200 with every check ok', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/health/ready' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      status: 'ready',
      checks: { database: { status: 'ok' }, migrations: { status: 'ok' }, shutting_down: { status: 'ok' } },
      failing: [],
    });
  });

  it('readiness is 503 naming the database when it does not answer, while liveness stays 200', async () => {
    await ctx.services.store.close();
    const res = await ctx.app.inject({ method: 'GET', url: '/health/ready' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({
      status: 'unavailable',
      failing: ['database'],
      checks: { database: { status: 'failing' }, migrations: { status: 'unknown' } },
    });
    expect((await ctx.app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200);
  });

  it('readiness is 503 naming the migrations this version has that the database lacks', async () => {
    await sql`delete from kysely_migration where name = '021_outbox_claim_indexes'`.execute(ctx.store.db);
    const res = await ctx.app.inject({ method: 'GET', url: '/health/ready' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({
      status: 'unavailable',
      failing: ['migrations'],
      checks: { migrations: { status: 'failing', detail: expect.stringContaining('021_outbox_claim_indexes') } },
    });
  });

  it('a migration applied by a newer version does not make this one unready (migrations are forward-only)', async () => {
    await sql`insert into kysely_migration (name, timestamp) values ('999_from_a_newer_version', '2026-01-01T00:00:00.000Z')`.execute(
      ctx.store.db,
    );
    expect((await ctx.app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
    expect(await ctx.services.store.migrationStatus()).toMatchObject({
      pending: [],
      unknown: ['999_from_a_newer_version'],
    });
  });
});

function parse(text: string): { status: number; body: string } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), body };
}

describe('readiness while the service shuts down', () => {
  it('is 503 naming shutting_down, in its own shape, while a request in flight completes', async () => {
    const ctx = await makeTestApp('sqlite');
    const text = await requestWhileClosing(
      ctx,
      'GET /health/ready HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n',
    );
    const answers = text.split(/(?=HTTP\/1\.1 )/).map(parse);
    expect(answers.map((a) => a.status)).toEqual([200, 503]);
    expect(JSON.parse(answers[1]?.body ?? '')).toMatchObject({
      status: 'unavailable',
      failing: ['shutting_down'],
      checks: { shutting_down: { status: 'failing' } },
    });
  });
});
