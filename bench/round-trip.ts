/**
 * What one loopback round trip costs the process that makes it, on this machine: CPU (user +
 * system, `process.cpuUsage`) per round trip, one at a time and 16 at a time, for
 *
 * - a raw TCP ping-pong of 64 bytes with an echo server in another process (the floor of any
 *   round trip: two socket writes and two wake-ups, one of them the peer's);
 * - `select 1` through a pg pool to the PostgreSQL server (with BENCH_DATABASE_URL);
 * - an HTTP GET with undici to a bare Node HTTP server in another process.
 *
 *   npx tsx bench/round-trip.ts [n]
 *
 * On loopback the kernel runs the receiver's side of TCP inside the sender's write, so a round
 * trip's system CPU lands in the process that sends: these figures are the part of a hot path's
 * CPU that only fewer round trips can cut.
 */
import { fork } from 'node:child_process';
import net from 'node:net';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import pg from 'pg';

const n = Number(process.argv[2] ?? '5000');

if (process.argv[2] === '--echo') {
  // The peer: a TCP echo and a bare HTTP server on free ports, told to the parent.
  const http = await import('node:http');
  const tcp = net.createServer((s) => s.on('data', (d) => s.write(d)));
  const web = http.createServer((_req, res) => res.end('ok'));
  await Promise.all([
    new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r)),
    new Promise<void>((r) => web.listen(0, '127.0.0.1', r)),
  ]);
  const port = (s: net.Server | import('node:http').Server) => (s.address() as net.AddressInfo).port;
  process.send?.({ tcp: port(tcp), http: port(web) });
} else {
  const peer = fork(fileURLToPath(import.meta.url), ['--echo'], { execArgv: ['--import', 'tsx'] });
  const [ports] = (await once(peer, 'message')) as [{ tcp: number; http: number }];
  try {
    const measure = async (name: string, concurrency: number, one: () => Promise<unknown>) => {
      for (let i = 0; i < 200; i++) await one();
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next++ < n) await one();
        }),
      );
      const c = process.cpuUsage(c0);
      const ms = performance.now() - t0;
      console.log(
        `${name}, ${concurrency} at a time: ${((c.user + c.system) / n).toFixed(1)} µs CPU each (user ${(c.user / n).toFixed(1)}, system ${(c.system / n).toFixed(1)}), ${Math.round((n * 1000) / ms)}/s`,
      );
    };

    const sockets = await Promise.all(
      Array.from({ length: 16 }, async () => {
        const s = net.connect(ports.tcp, '127.0.0.1');
        s.setNoDelay(true);
        await once(s, 'connect');
        return s;
      }),
    );
    const payload = Buffer.alloc(64, 1);
    const free = [...sockets];
    const ping = async () => {
      const s = free.pop();
      if (!s) throw new Error('no socket free');
      s.write(payload);
      let got = 0;
      while (got < payload.length) got += ((await once(s, 'data')) as [Buffer])[0].length;
      free.push(s);
    };
    await measure('TCP ping-pong, 64 bytes', 1, ping);
    await measure('TCP ping-pong, 64 bytes', 16, ping);
    for (const s of sockets) s.destroy();

    const agent = new Agent({ connections: 16, keepAliveTimeout: 10_000 });
    const get = async () => {
      const res = await request(`http://127.0.0.1:${ports.http}/`, { dispatcher: agent });
      await res.body.text();
    };
    await measure('HTTP GET (undici → node:http)', 1, get);
    await measure('HTTP GET (undici → node:http)', 16, get);
    await agent.close();

    const url = process.env.BENCH_DATABASE_URL;
    if (url) {
      const pool = new pg.Pool({ connectionString: url, max: 16 });
      const select = () => pool.query('select 1');
      await measure('pg select 1', 1, select);
      await measure('pg select 1', 16, select);
      await pool.end();
    }
  } finally {
    peer.kill();
  }
}
