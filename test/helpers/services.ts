import pino, { type Logger } from 'pino';
import { loadConfig, type Config } from '../../src/config/env.js';
import { createServices, type ServiceOptions, type Services } from '../../src/services.js';
import { buildApp, type AppOptions } from '../../src/app.js';
import type { App } from '../../src/http/types.js';
import { freshDatabase, type TestDatabase } from './stores.js';
import type { KyselyBackedStore } from '../../src/storage/kysely/store.js';
import type { Store } from '../../src/storage/contract.js';

export const OPERATOR = { user: 'ops', pass: 'correct horse battery staple' };
export const basicAuth = (user = OPERATOR.user, pass = OPERATOR.pass) =>
  `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

export interface TestContext {
  app: App;
  services: Services;
  db: TestDatabase;
  /** The store the services use, with its query builder (to seed or inspect rows directly). */
  store: KyselyBackedStore;
  close(): Promise<void>;
}

/** One service instance: its app and services; `close` closes both (and with them the store), never the database. */
export interface AppInstance {
  app: App;
  services: Services;
  close(): Promise<void>;
}

/**
 * The real app and services over a store already open (a second instance, a restart, a logger of
 * the test's own); the operator is `OPERATOR`. The one place tests build services.
 */
export async function appOver(
  config: Config,
  deps: { logger: Logger; store: Store },
  serviceOptions: ServiceOptions = {},
  appOptions: AppOptions = {},
): Promise<AppInstance> {
  const services = createServices(config, { ...deps, operator: OPERATOR }, serviceOptions);
  const app = await buildApp(services, appOptions);
  return {
    app,
    services,
    async close() {
      await app.close();
      await services.close();
    },
  };
}

/** The real app over a fresh database; nothing listens (use `app.inject`). */
export async function makeTestApp(
  kind: 'sqlite' | 'postgres',
  env: Record<string, string> = {},
  serviceOptions: ServiceOptions = {},
  appOptions: AppOptions = {},
): Promise<TestContext> {
  const db = freshDatabase(kind);
  const config: Config = { ...loadConfig({ PORT: '0', ...env }), database: db.config };
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const store = await db.open({ logger });
  const instance = await appOver(config, { logger, store }, serviceOptions, appOptions);
  return {
    app: instance.app,
    services: instance.services,
    db,
    store,
    async close() {
      await instance.close();
      await db.dispose();
    },
  };
}
