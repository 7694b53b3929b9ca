/**
 * The simulator's BI-SNAP side: its API paths, its own signing key (served at
 * `GET /_sim/snap-bi/public-key`), and its notifications, which replace the legacy ones for the
 * transactions it created.
 */
import type { FastifyInstance } from 'fastify';
import type { KeyObject } from 'node:crypto';
import type { SimContext } from '../context.js';
import type { Txn } from '../state.js';
import { publicKeyOf, signingKey } from './crypto.js';
import { SnapNotifier } from './notify.js';
import { SNAP_BI_DEFAULTS, type SnapBiOptions } from './options.js';
import { registerSnapBiRoutes } from './routes.js';
import { SnapBiState } from './state.js';
import { notification, latestStatus } from './wire.js';

export type { SnapBiOptions } from './options.js';
export { readSnapBiEnv } from './options.js';

export interface SnapBiSide {
  publicKeyPem: string;
  setNotificationUrl(url: string | undefined): void;
  stop(): Promise<void>;
}

export function registerSnapBi(app: FastifyInstance, ctx: SimContext, given: SnapBiOptions | undefined): SnapBiSide {
  const options: SnapBiOptions = { ...SNAP_BI_DEFAULTS, ...given };
  const own = signingKey(options.privateKey);
  const merchantKey: KeyObject | undefined = options.merchantPublicKey
    ? publicKeyOf(options.merchantPublicKey)
    : undefined;
  const state = new SnapBiState();
  const notifier = new SnapNotifier({
    key: () => own.privateKey,
    baseUrl: () => options.notificationUrl,
    partnerId: () => options.partnerId,
    timeScale: () => ctx.config.timeScale,
    timeoutMs: 15_000,
  });
  const merchant = () => ctx.merchants.defaultMerchant();
  // A transaction made through BI-SNAP is reported in BI-SNAP's format only.
  ctx.notifier.interceptors.push((t: Txn) => {
    const s = state.byOrder.get(t.order_id);
    if (!s || t.merchant_id !== merchant().id) return false;
    if (t.status === 'pending') return true;
    const n = notification(s, t);
    notifier.send(n.path, s.orderId, latestStatus(t.status).code, n.body);
    return true;
  });
  registerSnapBiRoutes(app, {
    options: () => options,
    merchantKey: () => merchantKey,
    state,
    merchant,
    baseUrl: () => ctx.config.baseUrl,
  });
  app.get('/_sim/snap-bi/public-key', async (_req, reply) =>
    reply.type('application/x-pem-file').send(own.publicKeyPem),
  );
  app.get('/_sim/snap-bi/notifications', async () => ({ notifications: notifier.records }));
  app.post('/_sim/snap-bi/expire-tokens', async () => {
    state.expireTokens();
    return { expired: true };
  });
  app.addHook('onClose', async () => notifier.stop());
  return {
    publicKeyPem: own.publicKeyPem,
    setNotificationUrl: (url) => {
      if (url === undefined) delete options.notificationUrl;
      else options.notificationUrl = url.replace(/\/+$/, '');
    },
    stop: () => notifier.stop(),
  };
}
