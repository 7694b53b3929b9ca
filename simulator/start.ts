/** Starting the simulator on a port: what paylink's simulator mode and the standalone entry run. */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildSimulator, type BuiltSimulator, type SimulatorOptions } from './app.js';

export interface RunningSimulator {
  baseUrl: string;
  app: FastifyInstance;
  setNotificationUrl(url: string | undefined): void;
  /** The public half of the BI-SNAP signing key (PEM), as `GET /_sim/snap-bi/public-key` serves it. */
  snapBiPublicKey: string;
  setSnapBiNotificationUrl(url: string | undefined): void;
  /** See `BuiltSimulator`: a merchant served from now on, by its owner's name. */
  upsertMerchant: BuiltSimulator['upsertMerchant'];
  merchantProblems: BuiltSimulator['merchantProblems'];
  removeMerchant: BuiltSimulator['removeMerchant'];
  close(): Promise<void>;
}

function urlOf(addr: AddressInfo): string {
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return `http://${host}:${addr.port}`;
}

export async function startSimulator(
  opts: SimulatorOptions & { host?: string; port?: number },
): Promise<RunningSimulator> {
  const sim = buildSimulator(opts);
  await sim.app.listen({ host: opts.host ?? '127.0.0.1', port: opts.port ?? 0 });
  const addr = sim.app.server.address();
  if (addr === null || typeof addr === 'string') throw new Error('simulator: unexpected listen address');
  const listenUrl = urlOf(addr);
  sim.setBaseUrl(opts.publicBaseUrl ?? listenUrl);
  let closed = false;
  return {
    baseUrl: listenUrl,
    app: sim.app,
    setNotificationUrl: sim.setNotificationUrl,
    snapBiPublicKey: sim.snapBiPublicKey,
    setSnapBiNotificationUrl: sim.setSnapBiNotificationUrl,
    upsertMerchant: sim.upsertMerchant,
    merchantProblems: sim.merchantProblems,
    removeMerchant: sim.removeMerchant,
    close: async () => {
      if (closed) return;
      closed = true;
      sim.stop();
      await sim.app.close();
    },
  };
}
