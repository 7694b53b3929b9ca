import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth } from '../helpers/services.js';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';

const auth = { authorization: basicAuth() };
const CANARY = 'CANARY-above-the-log-dir-7d1f0c';

const isLogView = (l: Record<string, unknown>) =>
  typeof l.audit === 'object' && l.audit !== null && 'action' in l.audit && l.audit.action === 'log_view';

function line(time: string, level: string, msg: string, extra: Record<string, unknown> = {}): string {
  return `${JSON.stringify({ level, time, msg, ...extra })}\n`;
}

describe.each(DATABASE_KINDS)('log endpoints (%s)', (kind) => {
  let ctx: LoggedApp;
  const get = (url: string) => ctx.app.inject({ method: 'GET', url, headers: auth });

  beforeAll(async () => {
    ctx = await makeLoggedApp(kind);
    const dir = ctx.logDir;
    // Two rotated files from earlier days, oldest first, with fixed mtimes.
    const old1 = path.join(dir, 'paylink.2026-11-20.1.log');
    const old2 = path.join(dir, 'paylink.2026-11-21.1.log');
    fs.writeFileSync(
      old1,
      line('2026-11-20T08:00:00.000Z', 'info', 'day one start', { request_id: 'r-1' }) +
        line('2026-11-20T09:00:00.000Z', 'error', 'day one failure', { order_id: 'SO-1:1', request_id: 'r-2' }),
    );
    fs.writeFileSync(
      old2,
      line('2026-11-21T08:00:00.000Z', 'warn', 'day two warning', { order_id: 'SO-1:1' }) +
        'not json at all\n' +
        line('2026-11-21T09:00:00.000Z', 'info', 'day two info', { order_id: 'SO-2' }),
    );
    fs.utimesSync(old1, new Date('2026-11-20T23:59:00Z'), new Date('2026-11-20T23:59:00Z'));
    fs.utimesSync(old2, new Date('2026-11-21T23:59:00Z'), new Date('2026-11-21T23:59:00Z'));
    // Things that must never be served: a canary above the log dir, links to it, a non-log file.
    fs.writeFileSync(path.join(dir, '..', 'secret.log'), `${CANARY}\n`);
    fs.writeFileSync(path.join(dir, '..', 'passwd'), `${CANARY}\n`);
    fs.symlinkSync(path.join(dir, '..', 'secret.log'), path.join(dir, 'evil.log'));
    fs.symlinkSync('../secret.log', path.join(dir, 'relative.log'));
    fs.writeFileSync(path.join(dir, 'notes.txt'), `${CANARY}\n`);
    await get('/health');
  });
  afterAll(async () => ctx.close());

  it('lists regular *.log files only, newest first', async () => {
    const res = await get('/api/logs/files');
    expect(res.statusCode).toBe(200);
    const files = res.json().files as Array<{ name: string; size_bytes: number; modified_at: string }>;
    const names = files.map((f) => f.name);
    expect(names[0]).toMatch(/^paylink\.\d{4}-\d{2}-\d{2}\.\d+\.log$/);
    expect(names.slice(1)).toEqual(['paylink.2026-11-21.1.log', 'paylink.2026-11-20.1.log']);
    expect(files[2]).toEqual({
      name: 'paylink.2026-11-20.1.log',
      size_bytes: fs.statSync(path.join(ctx.logDir, 'paylink.2026-11-20.1.log')).size,
      modified_at: '2026-11-21T06:59:00+07:00',
    });
  });

  it('serves a listed file as text/plain with nosniff, and audits the view', async () => {
    const res = await get('/api/logs/view?file=paylink.2026-11-20.1.log');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.body).toBe(fs.readFileSync(path.join(ctx.logDir, 'paylink.2026-11-20.1.log'), 'utf8'));
    expect((await ctx.lines()).filter((l) => isLogView(l) && l.file === 'paylink.2026-11-20.1.log')).toEqual([
      expect.objectContaining({
        audit: { actor: 'operator:ops', action: 'log_view', subject: 'paylink.2026-11-20.1.log', outcome: 'opened' },
      }),
    ]);
  });

  it("the console's view of a file writes the same audit line as the API's", async () => {
    const res = await get('/console/logs/view?file=paylink.2026-11-21.1.log');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('day two warning');
    expect((await ctx.lines()).filter((l) => isLogView(l) && l.file === 'paylink.2026-11-21.1.log')).toEqual([
      expect.objectContaining({
        audit: { actor: 'operator:ops', action: 'log_view', subject: 'paylink.2026-11-21.1.log', outcome: 'opened' },
      }),
    ]);
  });

  it('tails the last N lines', async () => {
    const res = await get('/api/logs/view?file=paylink.2026-11-21.1.log&tail=2');
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(
      `not json at all\n${line('2026-11-21T09:00:00.000Z', 'info', 'day two info', { order_id: 'SO-2' })}`,
    );
    expect((await get('/api/logs/view?file=paylink.2026-11-21.1.log&tail=10001')).statusCode).toBe(400);
    expect((await get('/api/logs/view?file=paylink.2026-11-21.1.log&tail=0')).statusCode).toBe(400);
    expect((await get('/api/logs/view?file=paylink.2026-11-21.1.log&tail=-1')).statusCode).toBe(400);
  });

  it('caps a large file at 1 MiB, cut at a line start', async () => {
    const big = path.join(ctx.logDir, 'paylink.2026-11-19.1.log');
    const one = line('2026-11-19T00:00:00.000Z', 'info', 'x'.repeat(200));
    fs.writeFileSync(big, one.repeat(Math.ceil((1.5 * 1024 * 1024) / one.length)));
    fs.utimesSync(big, new Date('2026-11-19T23:59:00Z'), new Date('2026-11-19T23:59:00Z'));
    const res = await get('/api/logs/view?file=paylink.2026-11-19.1.log');
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.length).toBeLessThanOrEqual(1024 * 1024);
    expect(res.rawPayload.length).toBeGreaterThan(1024 * 1024 - one.length);
    expect(res.headers['x-log-truncated']).toBe('true');
    expect(res.body.startsWith('{"level"')).toBe(true);
    const tail = await get('/api/logs/view?file=paylink.2026-11-19.1.log&tail=10000');
    expect(tail.rawPayload.length).toBeLessThanOrEqual(1024 * 1024);
    expect(
      tail.body
        .split('\n')
        .filter(Boolean)
        .every((l) => l === one.trimEnd()),
    ).toBe(true);
    fs.rmSync(big);
  });

  const TRAVERSALS = [
    '../secret.log',
    '..%2fsecret.log',
    '..%252fsecret.log',
    '%2e%2e%2fsecret.log',
    '%252e%252e%252fsecret.log',
    '..%c0%afsecret.log',
    '..\\secret.log',
    '..%5csecret.log',
    '/etc/passwd',
    '%2fetc%2fpasswd',
    '/../../etc/passwd',
    'paylink.log%00.txt',
    'secret.log%00',
    '\uff0e\uff0e/secret.log',
    '%ef%bc%8e%ef%bc%8e%2fsecret.log',
    'evil.log',
    'relative.log',
    'notes.txt',
    '..',
    '.',
    '',
    'secret.log.',
    'secret.log%20',
    'paylink.2026-11-20.1.log/../../secret.log',
    './paylink.2026-11-20.1.log',
    'logs/../secret.log',
    `${'a'.repeat(200)}.log`,
    `${'a'.repeat(10_000)}.log`,
    'PAYLINK.2026-11-20.1.LOG',
    'paylink.2026-11-20.1.log::$DATA',
    'file:///etc/passwd',
    'C:\\Windows\\win.ini',
    '....//secret.log',
    '..;/secret.log',
    'secret.log?x=1',
    '%2e%2e/%2e%2e/secret.log',
    '..%255csecret.log',
    'nope.log',
    '~/secret.log',
    'paylink.2026-11-20.1.log%0a',
    '%0d%0asecret.log',
    'paylink.2026-11-20.1.log&file=../secret.log',
  ];
  it(`refuses ${TRAVERSALS.length} traversal payloads with 400 or 404 and never leaks the canary`, async () => {
    expect(TRAVERSALS.length).toBeGreaterThanOrEqual(40);
    for (const p of TRAVERSALS) {
      for (const url of [
        `/api/logs/view?file=${p}`,
        `/api/logs/view?file=${encodeURIComponent(p)}`,
        `/api/logs/view?tail=5&file=${encodeURIComponent(p)}`,
      ]) {
        const res = await get(url);
        expect([400, 404], `${url} → ${res.statusCode}`).toContain(res.statusCode);
        expect(res.body).not.toContain(CANARY);
      }
    }
    expect((await get('/api/logs/view?file=paylink.2026-11-20.1.log&file=../secret.log')).statusCode).toBe(400);
    expect((await get('/api/logs/view')).statusCode).toBe(400);
  });

  describe('GET /api/logs', () => {
    it('returns entries newest first across rotated files, skipping non-JSON lines', async () => {
      const res = await get('/api/logs?until=2026-11-22T00:00:00Z');
      expect(res.statusCode).toBe(200);
      expect(res.json().entries.map((e: { msg: string }) => e.msg)).toEqual([
        'day two info',
        'day two warning',
        'day one failure',
        'day one start',
      ]);
    });

    it('filters by minimum level, order_id, request_id, text and time', async () => {
      const msgs = async (q: string) => (await get(`/api/logs?${q}`)).json().entries.map((e: { msg: string }) => e.msg);
      expect(await msgs('level=warn&until=2026-11-22T00:00:00Z')).toEqual(['day two warning', 'day one failure']);
      expect(await msgs('order_id=SO-1%3A1')).toEqual(['day two warning', 'day one failure']);
      expect(await msgs('request_id=r-1')).toEqual(['day one start']);
      expect(await msgs('q=FAILURE&until=2026-11-22T00:00:00Z')).toEqual(['day one failure']);
      expect(await msgs('since=2026-11-20T08:30:00Z&until=2026-11-21T08:30:00Z')).toEqual([
        'day two warning',
        'day one failure',
      ]);
    });

    it('pages with an opaque cursor, without gaps or repeats', async () => {
      const seen: string[] = [];
      let url = '/api/logs?limit=1&until=2026-11-22T00:00:00Z';
      for (let i = 0; i < 10; i++) {
        const body = (await get(url)).json();
        seen.push(...body.entries.map((e: { msg: string }) => e.msg));
        if (!body.next_cursor) break;
        url = `/api/logs?limit=1&until=2026-11-22T00:00:00Z&cursor=${body.next_cursor}`;
      }
      expect(seen).toEqual(['day two info', 'day two warning', 'day one failure', 'day one start']);
    });

    it('finds the request lines this app wrote, with their request_id', async () => {
      const res = await ctx.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'find-me-123' } });
      expect(res.statusCode).toBe(200);
      await ctx.rawLogs();
      const entries = (await get('/api/logs?request_id=find-me-123')).json().entries;
      // One line per request, written when it completes, with the request's method and URL.
      expect(entries.map((e: { msg: string }) => e.msg)).toEqual(['request completed']);
      expect(entries[0]).toMatchObject({ req: { method: 'GET', url: '/health' }, res: { status_code: 200 } });
    });

    it('puts order_id and mercant_id on every line of a request about an order', async () => {
      // The gateway (port 9) refuses the connection: the request fails, and its lines still tell whose it was.
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/api/payment-links',
        headers: { 'x-request-id': 'ctx-order-1' },
        payload: { order_id: 'LOGCTX/7:2', nominal: 10000 },
      });
      expect(res.statusCode).toBeGreaterThanOrEqual(500);
      await ctx.rawLogs();
      // Every line of the request — found by its request_id, so lines without the order would show —
      // carries the order once the body is parsed: the outbound gateway call's line included.
      const entries = (await get('/api/logs?request_id=ctx-order-1')).json().entries as Array<Record<string, unknown>>;
      const msgs = entries.map((e) => e.msg);
      expect(msgs).toEqual(expect.arrayContaining(['gateway call failed', 'request completed']));
      for (const e of entries)
        expect(e, String(e.msg)).toMatchObject({
          request_id: 'ctx-order-1',
          order_id: 'LOGCTX/7:2',
          mercant_id: 'LOGCTX/7',
        });
      const byOrder = (await get('/api/logs?order_id=LOGCTX%2F7%3A2')).json().entries as Array<Record<string, unknown>>;
      expect(byOrder.map((e) => e.msg)).toContain('gateway call failed');
    });

    it('rejects bad filters with 400', async () => {
      for (const q of [
        'limit=0',
        'limit=1001',
        'limit=abc',
        'level=loud',
        'since=yesterday',
        'since=2026-06-30T23:59:60Z',
        'until=2026-02-30T00:00:00Z',
        'cursor=not%20base64',
        'cursor=eyJ4IjoxfQ',
        `q=${'x'.repeat(201)}`,
        'unknown=1',
      ]) {
        expect((await get(`/api/logs?${q}`)).statusCode, q).toBe(400);
      }
    });
  });
});
