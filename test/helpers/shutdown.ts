/**
 * A request that arrives while the app shuts down: one keep-alive connection holds a slow request
 * in flight, `ctx.close()` begins, and `request` (raw HTTP/1.1) is written on the same connection
 * once closing began; the slow one then completes. The raw text of every answer on the connection.
 */
import net from 'node:net';
import type { TestContext } from './services.js';

export async function requestWhileClosing(ctx: TestContext, request: string): Promise<string> {
  let entered!: () => void;
  const inFlight = new Promise<void>((r) => (entered = r));
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  ctx.app.get('/slow', { config: { auth: 'none' } }, async () => {
    entered();
    await released;
    return { done: true };
  });
  let closingStarted!: () => void;
  const closing = new Promise<void>((r) => (closingStarted = r));
  ctx.app.addHook('preClose', async () => closingStarted());
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (ctx.app.server.address() as net.AddressInfo).port;
  const socket = net.connect(port, '127.0.0.1');
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => (text += d));
  const ended = new Promise<void>((r) => socket.on('end', r));
  socket.write('GET /slow HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
  await inFlight;
  const closed = ctx.close();
  await closing;
  socket.write(request);
  await new Promise((r) => setTimeout(r, 100));
  release();
  await ended;
  socket.end();
  await closed;
  return text;
}
