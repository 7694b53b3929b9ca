/**
 * A TCP proxy on a loopback port in front of PostgreSQL, for outages without touching the shared
 * cluster (others use it at the same time): `down()` cuts every open connection and drops each
 * new one at once, as a restarting server does; `up()` forwards again.
 */
import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Connections cut or refused while down. */
  readonly dropped: number;
  down(): void;
  up(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let isDown = false;
  let dropped = 0;
  const open = new Map<net.Socket, net.Socket>();
  const server = net.createServer((client) => {
    if (isDown) {
      dropped++;
      client.destroy();
      return;
    }
    const upstream = net.connect(targetPort, targetHost);
    open.set(client, upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    get dropped() {
      return dropped;
    },
    down() {
      isDown = true;
      for (const [client, upstream] of open) {
        dropped++;
        client.destroy();
        upstream.destroy();
      }
      open.clear();
    },
    up() {
      isDown = false;
    },
    async close() {
      for (const [client, upstream] of open) {
        client.destroy();
        upstream.destroy();
      }
      open.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
