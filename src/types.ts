/**
 * The types the modules share about the running service, apart from the composition root
 * (`services.ts`) that builds it: importing them never pulls in the workers or the wiring.
 */
import type { Logger } from 'pino';
import type { Config } from './config/env.js';
import type { Clock } from './platform/clock.js';
import type { Store } from './storage/contract.js';
import type { AttemptOutcome } from './model/delivery.js';
import type { RuntimeConfigService } from './config/runtime.js';
import type { Gateway, Gateways } from './gateway/port.js';
import type { TransactionHistories } from './gateway/history.js';
import type { Metrics } from './platform/metrics.js';
import type { FeedWake } from './domain/erp-events/feed-wake.js';

/** Something that runs in the background while the service is up: the outbox worker, the reconciler and the retention pruner, each on a `Periodic` (periodic.ts). */
export interface BackgroundWorker {
  readonly name: string;
  start(): void;
  /** Finishes or abandons in-flight work and resolves when nothing of it runs any more. */
  stop(): Promise<void>;
}

export interface Services {
  config: Config;
  logger: Logger;
  clock: Clock;
  store: Store;
  runtimeConfig: RuntimeConfigService;
  /** The payment gateway, through its port: which one it is, only the composition root knows. */
  gateway: Gateway;
  /** Each account's gateway (its mode, keys and notification URL); `gateway` is `default`'s. */
  gateways: Gateways;
  /** Each account's transaction history at the gateway (BI-SNAP), for reconciling a day. */
  histories: TransactionHistories;
  metrics: Metrics;
  /** Operator Basic-Auth credentials in force (configured or generated). */
  operator: { user: string; pass: string };
  /**
   * HMAC key of the console's CSRF tokens, derived from the config encryption key: every instance
   * sharing that key accepts the others' forms, and nobody without it can mint a token.
   */
  csrfKey: Buffer;
  /** HMAC key of the console's one-time form keys, derived from the same key for another purpose (so neither stands in for the other). */
  formKeySecret: Buffer;
  version: string;
  startedAt: Date;
  /** Base URL of the embedded simulator, in simulator mode. */
  simulatorBaseUrl?: string;
  /** The embedded simulator's merchants, in simulator mode: each account in simulator mode is one. */
  embeddedGateway?: EmbeddedGateway;
  workers: BackgroundWorker[];
  /** The ERP outbox worker: `wake()` after writing an event delivers it at once (and wakes `feed`). */
  outbox: Outbox;
  /** Wakes the pull feed's waiting pulls when ERP events are committed, here or on another instance. */
  feed: FeedWake;
  /** Stops the workers, closes the gateway client and the store. */
  close(): Promise<void>;
}

/** An account's merchant at the embedded simulator: its keys and MID. */
export interface EmbeddedMerchant {
  serverKey: string;
  clientKey?: string;
  merchantId: string;
}

/** Why the embedded simulator would refuse a merchant: the field at fault (when one is) and a sentence. */
export interface EmbeddedMerchantProblem {
  field?: 'server_key' | 'client_key' | 'merchant_id';
  message: string;
}

/**
 * The embedded simulator as the accounts see it: the composition root adapts the simulator to it,
 * so the domain never imports the simulator. Each account's merchant notifies that account's URL.
 */
export interface EmbeddedGateway {
  /** What would stop `account` being served with these settings (a key or MID another merchant uses). */
  merchantProblems(account: string, merchant: EmbeddedMerchant): EmbeddedMerchantProblem[];
  /** Serves `account` as a merchant of its own from now on (its earlier settings replaced); throws on a problem. */
  merchantFor(account: string, merchant: EmbeddedMerchant): void;
  /** Stops serving `account` (no longer in simulator mode, or without keys). */
  dropMerchant(account: string): void;
}

/** The part of `Services` a function uses: domain functions name theirs, so a unit test builds only those. */
export type Deps<K extends keyof Services> = Pick<Services, K>;

export interface Outbox extends BackgroundWorker {
  readonly instanceId: string;
  /** Deliver what is due now, without waiting for the poll. Cheap; safe to call often. */
  wake(): void;
  /** One claim-and-deliver round; resolves with the number of events attempted. */
  runOnce(): Promise<number>;
  /** Rounds until a round attempts nothing; resolves with the total attempted. */
  drain(maxRounds?: number): Promise<number>;
  /** The outcome of the next attempt recorded for `seq` (by any instance), or undefined after `timeoutMs`. */
  waitForAttempt(seq: number, afterAttempts: number, timeoutMs: number): Promise<AttemptOutcome | undefined>;
  /** Refreshes the outbox gauges: `paylink_outbox_depth` and `paylink_outbox_oldest_pending_seconds`. */
  refreshDepth(): Promise<void>;
}
