import type { Logger } from 'pino';
import { erpPrivatePolicy, type Config } from './config/env.js';
import type { Clock } from './platform/clock.js';
import { systemClock } from './platform/clock.js';
import type { Store } from './storage/contract.js';
import { createSecretBox, processSecretBox } from './platform/secret-box.js';
import { createRuntimeConfigService, defaultRuntimeConfig, secretValues } from './config/runtime.js';
import { MidtransClient } from './gateway/midtrans/client.js';
import { MidtransGateway } from './gateway/midtrans/gateway.js';
import { SnapBiClient } from './gateway/snap-bi/client.js';
import { SnapBiGateway } from './gateway/snap-bi/gateway.js';
import { RoutedGateway } from './gateway/snap-bi/routed.js';
import { snapBiCredentials } from './gateway/snap-bi/credentials.js';
import { createHistoryReconciler, type HistoryReconcilerOptions } from './workers/history-reconciler.js';
import { SnapBiHistory } from './gateway/snap-bi/history.js';
import type { TransactionHistories, TransactionHistory } from './gateway/history.js';
import type { Gateway, Gateways } from './gateway/port.js';
import { DEFAULT_ACCOUNT } from './model/account.js';
import { DEFAULT_PARTNER_SERVICE_ID } from './model/runtime-config.js';
import { createMetrics } from './platform/metrics.js';
import { createOutbox, type OutboxOptions } from './workers/outbox/worker.js';
import { createReconciler, type ReconcilerOptions } from './workers/status-sweeper.js';
import { createPruner, type PrunerOptions } from './workers/pruner.js';
import { registerLogSecrets } from './platform/logging/logger.js';
import type { Resolve } from './platform/connect-guard.js';
import type { BackgroundWorker, EmbeddedGateway, Outbox, Services } from './types.js';
import { createFeedWake, type FeedWake, type FeedWakeOptions } from './domain/erp-events/feed-wake.js';
import { VERSION } from './platform/version.js';

export type { BackgroundWorker, Services } from './types.js';

export interface ServiceOptions {
  clock?: Clock;
  simulatorBaseUrl?: string;
  /** The embedded simulator's merchants, in simulator mode (see `EmbeddedGateway`). */
  embeddedGateway?: EmbeddedGateway;
  gatewayTimeoutMs?: number;
  /** Cache time of the runtime config, ms (default 1000). */
  runtimeConfigCacheMs?: number;
  /** Tests: the name resolver behind the gateway client's connect-time address check (default `dns.lookup`). */
  gatewayResolve?: Resolve;
  /** Outbox worker tuning (instance id, lease, poll interval, randomness). */
  outbox?: OutboxOptions;
  /** The pull feed's poll intervals while waiting. */
  feed?: FeedWakeOptions;
  /** Reconciler tuning (rate limit, sleep). */
  reconciler?: ReconcilerOptions;
  /** Retention tuning (interval, batch size). */
  retention?: PrunerOptions;
  /** The daily reconciliation from the gateway's history (time of day, interval). */
  historyReconciler?: HistoryReconcilerOptions;
}

/**
 * The outbox whose `wake()` also wakes the pull feed: every caller wakes the outbox right after
 * committing ERP events, so the feed hears of each commit without a call of its own at each site.
 */
function wakingFeed(worker: Outbox, feed: FeedWake): Outbox {
  const wake = () => {
    worker.wake();
    feed.committed();
  };
  return new Proxy(worker, {
    get(target, prop) {
      if (prop === 'wake') return wake;
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** The one composition root. Everything the app and the workers use is built here, once. */
export function createServices(
  config: Config,
  deps: {
    logger: Logger;
    store: Store;
    operator: { user: string; pass: string };
    configKeys?: { current: Buffer; previous: Buffer[] };
  },
  o: ServiceOptions = {},
): Services {
  const clock = o.clock ?? systemClock;
  // `startService` passes the keys resolved from the environment or DATA_DIR; see processSecretBox otherwise.
  const box = deps.configKeys ? createSecretBox(deps.configKeys.current, deps.configKeys.previous) : processSecretBox();
  const runtimeConfig = createRuntimeConfigService(
    deps.store,
    () => defaultRuntimeConfig(config, o.simulatorBaseUrl),
    o.runtimeConfigCacheMs ?? 1_000,
    (s) => registerLogSecrets(deps.logger, secretValues(s)),
    box,
  );
  const metrics = createMetrics();
  const clients: Array<MidtransClient | SnapBiClient> = [];
  // One client (its own connections) and gateway per account, over that account's runtime config.
  const gatewayOf = (account: string): Gateway => {
    const accountConfig = runtimeConfig.forAccount(account);
    const client = new MidtransClient({
      runtimeConfig: () => accountConfig.current(),
      logger: deps.logger.child({ component: 'gateway', ...(account === DEFAULT_ACCOUNT ? {} : { account }) }),
      timeoutMs: o.gatewayTimeoutMs,
      blockPrivateAddresses: config.isProduction,
      resolve: o.gatewayResolve,
      observe: (ob) =>
        metrics.gatewayDuration.observe({ operation: ob.operation, outcome: String(ob.outcome) }, ob.durationMs / 1000),
    });
    clients.push(client);
    // The default account's notification URL is the one set in the gateway's dashboard; another
    // account's is named on each create call, so one dashboard setting serves every account.
    const notifyUrl =
      account === DEFAULT_ACCOUNT
        ? undefined
        : `${config.publicBaseUrl.replace(/\/+$/, '')}/webhook/midtrans/${encodeURIComponent(account)}`;
    const legacy = new MidtransGateway(client, () => accountConfig.current(), notifyUrl);
    const snapBiClient = new SnapBiClient({
      credentials: async () => snapBiCredentials(await accountConfig.current()),
      logger: deps.logger.child({
        component: 'gateway',
        api: 'snap_bi',
        ...(account === DEFAULT_ACCOUNT ? {} : { account }),
      }),
      timeoutMs: o.gatewayTimeoutMs,
      blockPrivateAddresses: config.isProduction,
    });
    clients.push(snapBiClient);
    const snapBi = new SnapBiGateway(
      snapBiClient,
      async () => (await accountConfig.current()).gateway.merchant_id,
      async () => (await accountConfig.current()).gateway.snap_bi.partner_service_id ?? DEFAULT_PARTNER_SERVICE_ID,
    );
    historyByAccount.set(
      account,
      new SnapBiHistory(snapBiClient, async () => {
        try {
          snapBiCredentials(await accountConfig.current());
          return true;
        } catch {
          return false;
        }
      }),
    );
    return new RoutedGateway(legacy, snapBi, () => accountConfig.current());
  };
  const byAccount = new Map<string, Gateway>();
  const historyByAccount = new Map<string, TransactionHistory>();
  const gateways: Gateways = {
    for(account) {
      let g = byAccount.get(account);
      if (!g) {
        g = gatewayOf(account);
        byAccount.set(account, g);
      }
      return g;
    },
  };
  const gateway = gateways.for(DEFAULT_ACCOUNT);
  // An account's history shares its BI-SNAP client (one token, one pool of connections).
  const histories: TransactionHistories = {
    for(account) {
      gateways.for(account);
      const h = historyByAccount.get(account);
      if (!h) throw new Error(`no transaction history for account ${account}`);
      return h;
    },
  };
  const workers: BackgroundWorker[] = [];
  const feed = createFeedWake(deps.store.signals, o.feed);
  const outbox = wakingFeed(
    createOutbox(
      { store: deps.store, runtimeConfig, clock, logger: deps.logger.child({ component: 'outbox' }), metrics },
      { blockPrivateAddresses: erpPrivatePolicy(config), concurrency: config.erp.maxLanes, ...o.outbox },
    ),
    feed,
  );
  workers.push(outbox);
  const services: Services = {
    config,
    logger: deps.logger,
    clock,
    store: deps.store,
    runtimeConfig,
    gateway,
    gateways,
    histories,
    metrics,
    operator: deps.operator,
    csrfKey: box.derive('console-csrf'),
    formKeySecret: box.derive('console-form-key'),
    version: VERSION,
    startedAt: clock.now(),
    simulatorBaseUrl: o.simulatorBaseUrl,
    embeddedGateway: o.embeddedGateway,
    workers,
    outbox,
    feed,
    async close() {
      feed.close();
      await Promise.allSettled(workers.map((w) => w.stop()));
      await Promise.allSettled(clients.map((c) => c.close()));
      await deps.store.close();
    },
  };
  workers.push(createReconciler(services, o.reconciler));
  workers.push(createHistoryReconciler(services, { at: config.reconciliationHistoryAt, ...o.historyReconciler }));
  workers.push(
    createPruner(
      { store: deps.store, runtimeConfig, clock, logger: deps.logger.child({ component: 'retention' }) },
      o.retention,
    ),
  );
  return services;
}
