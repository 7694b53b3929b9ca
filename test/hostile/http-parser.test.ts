import net from 'node:net';
import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestWhileClosing } from '../helpers/shutdown.js';
import { basicAuth, makeTestApp, type TestContext } from '../helpers/services.js';

/** Sends raw bytes on a fresh connection and collects everything until the server closes it. */
function raw(port: number, bytes: string): Promise<{ text: string; closedBy: 'end' | 'error' }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (text += d));
    socket.on('end', () => {
      socket.end();
      resolve({ text, closedBy: 'end' });
    });
    socket.on('error', () => resolve({ text, closedBy: 'error' }));
    socket.write(bytes);
  });
}

function parse(text: string): { status: number; headers: Record<string, string>; body: string } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

/** Listens on a loopback port; returns it. */
async function listen(ctx: TestContext): Promise<number> {
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  const addr = ctx.app.server.address();
  return typeof addr === 'object' && addr !== null ? addr.port : 0;
}

describe('answers of the HTTP parser (clientError)', () => {
  let ctx: TestContext;
  let port: number;
  beforeAll(async () => {
    ctx = await makeTestApp('sqlite');
    port = await listen(ctx);
  });
  afterAll(async () => ctx.close());

  it('headers over 16 KiB: 431 problem+json with a request id; the keep-alive client carries on', async () => {
    const client = new Client(`http://127.0.0.1:${port}`, { pipelining: 1 });
    try {
      const first = await client.request({ method: 'GET', path: '/health' });
      await first.body.text();
      expect(first.statusCode).toBe(200);
      const big = await client.request({ method: 'GET', path: '/health', headers: { 'x-filler': 'a'.repeat(20_000) } });
      const body = (await big.body.json()) as Record<string, unknown>;
      expect(big.statusCode).toBe(431);
      expect(big.headers['content-type']).toBe('application/problem+json');
      expect(big.headers.connection).toBe('close');
      expect(body).toMatchObject({ status: 431, code: 'HEADERS_TOO_LARGE', request_id: big.headers['x-request-id'] });
      expect(String(body.request_id)).toMatch(/^[0-9a-f-]{36}$/);
      // The same client's next request succeeds (on a new connection, as Connection: close said).
      const after = await client.request({ method: 'GET', path: '/health' });
      await after.body.text();
      expect(after.statusCode).toBe(200);
    } finally {
      await client.close();
    }
  });

  it('a URL over 16 KiB: 431 problem+json, answered in full and closed with a FIN, not a reset', async () => {
    const res = await raw(
      port,
      `GET /health?x=${'b'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n`,
    );
    expect(res.closedBy).toBe('end');
    const r = parse(res.text);
    expect(r.status).toBe(431);
    expect(r.headers['content-type']).toBe('application/problem+json');
    expect(r.headers.connection).toBe('close');
    expect(Number(r.headers['content-length'])).toBe(Buffer.byteLength(r.body));
    expect(JSON.parse(r.body)).toMatchObject({
      status: 431,
      code: 'HEADERS_TOO_LARGE',
      request_id: r.headers['x-request-id'],
    });
  });

  it.each([
    ['a malformed request line', 'GARBAGE\r\n\r\n'],
    ['a NUL byte in a header value', 'GET /health HTTP/1.1\r\nHost: x\r\nIdempotency-Key: a\u0000b\r\n\r\n'],
    ['a bad Content-Length', 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'],
  ])('%s: 400 problem+json with a request id', async (_name, bytes) => {
    const res = await raw(port, bytes);
    const r = parse(res.text);
    expect(r.status).toBe(400);
    expect(r.headers['content-type']).toBe('application/problem+json');
    expect(r.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(r.body)).toMatchObject({
      status: 400,
      code: 'MALFORMED_REQUEST',
      request_id: r.headers['x-request-id'],
    });
  });
});

/**
 * Sends `head`, then `size` bytes of body in 64 KiB writes as fast as the socket takes them (as
 * chunks when `chunked`; `first` in front), and collects the answer until the connection closes.
 */
function sendLarge(
  port: number,
  head: string,
  size: number,
  chunked: boolean,
  first = '',
): Promise<{ text: string; error: string | undefined }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    let error: string | undefined;
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (text += d));
    socket.on('end', () => socket.end());
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on('close', () => resolve({ text, error }));
    socket.once('connect', () => {
      void (async () => {
        socket.write(head + first);
        const chunk = Buffer.alloc(64 * 1024, 'a');
        for (let sent = 0; sent < size && socket.writable; sent += chunk.length) {
          const ok = chunked
            ? socket.write(`${chunk.length.toString(16)}\r\n${chunk.toString('latin1')}\r\n`)
            : socket.write(chunk);
          if (!ok) await new Promise((r) => (socket.once('drain', r), socket.once('close', r)));
        }
        if (chunked && socket.writable) socket.write('0\r\n\r\n');
      })();
    });
  });
}

describe('a body still arriving when it is refused', () => {
  let ctx: TestContext;
  let port: number;
  beforeAll(async () => {
    ctx = await makeTestApp('sqlite');
    port = await listen(ctx);
  });
  afterAll(async () => ctx.close());

  const SIZE = 11 * 1024 * 1024;
  const attempts = [
    ...Array.from(
      { length: 30 },
      () =>
        [
          'the webhook (64 KiB), Content-Length',
          `POST /webhook/midtrans HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${SIZE}\r\n\r\n`,
          false,
        ] as const,
    ),
    ...Array.from(
      { length: 5 },
      () =>
        [
          'an operator route (256 KiB), Content-Length',
          `POST /api/payment-links HTTP/1.1\r\nHost: x\r\nAuthorization: ${basicAuth()}\r\nContent-Type: application/json\r\nContent-Length: ${SIZE}\r\n\r\n`,
          false,
        ] as const,
    ),
    ...Array.from(
      { length: 5 },
      () =>
        [
          'the webhook, chunked',
          `POST /webhook/midtrans HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
          true,
        ] as const,
    ),
  ];

  it(`11 MB sent in full while the server refuses it: every one of ${attempts.length} attempts reads its 413 problem+json, then a clean close`, async () => {
    const outcomes: string[] = [];
    for (const [name, head, chunked] of attempts) {
      const { text, error } = await sendLarge(port, head, SIZE, chunked);
      const r = parse(text);
      const body = r.status === 413 ? (JSON.parse(r.body) as Record<string, unknown>) : {};
      const ok =
        r.status === 413 &&
        /^application\/problem\+json/.test(r.headers['content-type'] ?? '') &&
        r.headers.connection === 'close' &&
        body.code === 'PAYLOAD_TOO_LARGE' &&
        body.request_id === r.headers['x-request-id'] &&
        error === undefined;
      outcomes.push(ok ? 'ok' : `${name}: status ${r.status || 'none'}, ${error ?? 'no socket error'}`);
    }
    expect(outcomes.filter((o) => o !== 'ok')).toEqual([]);
  });

  it('a 20 MB gateway report refused at its third line: its 400 problem+json is read, then a clean close', async () => {
    const size = 20 * 1024 * 1024;
    const first = 'Order ID,Transaction Status,Amount\r\nA-1,settlement,1000\r\nA-2,settlement,12x\r\n';
    const head = `POST /api/reconciliation/imports HTTP/1.1\r\nHost: x\r\nAuthorization: ${basicAuth()}\r\nContent-Type: text/csv\r\nConnection: close\r\nContent-Length: ${first.length + size}\r\n\r\n`;
    const { text, error } = await sendLarge(port, head, size, false, first);
    const r = parse(text);
    expect({ status: r.status, error }).toEqual({ status: 400, error: undefined });
    expect(JSON.parse(r.body)).toMatchObject({
      status: 400,
      code: 'VALIDATION_FAILED',
      request_id: r.headers['x-request-id'],
    });
    expect(r.body).toContain('Line 3');
  });
});

describe('a request that does not arrive in full in time', () => {
  let ctx: TestContext;
  let port: number;
  beforeAll(async () => {
    ctx = await makeTestApp('sqlite', {}, {}, { requestTimeout: 400 });
    port = await listen(ctx);
  });
  afterAll(async () => ctx.close());

  it.each([
    ['headers never finished', 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n'],
    [
      'a body shorter than its Content-Length',
      'POST /webhook/midtrans HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"order_id"',
    ],
    // Refused for its size, its rest is awaited (to be dropped) only as long as any request may take.
    [
      'a body over the limit that stops arriving',
      'POST /webhook/midtrans HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n{"order_id"',
    ],
  ])('%s: 408 problem+json with a request id, Connection: close, closed with a FIN', async (_name, bytes) => {
    const started = Date.now();
    const res = await raw(port, bytes);
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(res.closedBy).toBe('end');
    const r = parse(res.text);
    expect(r.status).toBe(408);
    expect(r.headers['content-type']).toBe('application/problem+json');
    expect(r.headers.connection).toBe('close');
    expect(r.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(r.body)).toMatchObject({
      status: 408,
      code: 'REQUEST_TIMEOUT',
      request_id: r.headers['x-request-id'],
    });
  });
});

describe('a request that arrives while the service shuts down', () => {
  it('503 problem+json SHUTTING_DOWN with a request id and Connection: close; the request in flight completes', async () => {
    const ctx = await makeTestApp('sqlite');
    const text = await requestWhileClosing(
      ctx,
      'GET /health HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nX-Request-Id: during-shutdown-1\r\n\r\n',
    );
    const second = text.indexOf('HTTP/1.1', 1);
    expect(parse(text.slice(0, second)).status).toBe(200);
    const r = parse(text.slice(second));
    expect(r.status).toBe(503);
    expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(r.headers.connection).toBe('close');
    expect(r.headers['x-request-id']).toBe('during-shutdown-1');
    expect(JSON.parse(r.body)).toMatchObject({ status: 503, code: 'SHUTTING_DOWN', request_id: 'during-shutdown-1' });
  });
});
