/** drainBody over a real connection: what is left of a body is read and dropped, up to its bound. */
import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { drainBody } from '../../src/http/plugins/drain-body.js';

const LIMIT = 1024 * 1024;

/** A server whose every request is drained (bound `LIMIT`), then answered with what its socket had read by then. */
async function drainingServer(): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((req, res) => {
    void drainBody(req, LIMIT).then(() => {
      const body = `read ${req.socket.bytesRead} complete ${String(req.complete)}`;
      res
        .writeHead(413, {
          'content-type': 'text/plain',
          'content-length': Buffer.byteLength(body),
          connection: 'close',
        })
        .end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  return { server, port: typeof addr === 'object' && addr !== null ? addr.port : 0 };
}

/** Sends `head`, then `bodyBytes` of chunked body (none: nothing more) while the socket takes it; the answer's last line. */
function send(port: number, head: string, bodyBytes: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(text.split('\r\n').at(-1) ?? ''));
    socket.once('connect', () => {
      void (async () => {
        socket.write(head);
        const chunk = `${(64 * 1024).toString(16)}\r\n${'a'.repeat(64 * 1024)}\r\n`;
        for (let sent = 0; sent < bodyBytes && socket.writable; sent += 64 * 1024) {
          if (!socket.write(chunk)) await new Promise((r) => (socket.once('drain', r), socket.once('close', r)));
        }
        if (bodyBytes > 0 && socket.writable) socket.end('0\r\n\r\n');
      })();
    });
  });
}

describe('drainBody', () => {
  let server: http.Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
  });

  it('reads a body to its end when it stays under the bound', async () => {
    const s = await drainingServer();
    server = s.server;
    expect(await send(s.port, 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n', LIMIT / 2)).toMatch(
      / complete true$/,
    );
  });

  it('stops once the bound is passed, however much the client still sends', async () => {
    const s = await drainingServer();
    server = s.server;
    const answer = await send(s.port, 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n', 16 * LIMIT);
    const read = Number(/^read (\d+) complete false$/.exec(answer)?.[1]);
    expect(read).toBeGreaterThan(LIMIT);
    expect(read).toBeLessThan(2 * LIMIT);
  });

  it('reads nothing of a body declared larger than the bound', async () => {
    const s = await drainingServer();
    server = s.server;
    // Headers only: were the body awaited, no answer would come.
    expect(await send(s.port, `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${2 * LIMIT}\r\n\r\n`, 0)).toMatch(
      / complete false$/,
    );
  });
});
