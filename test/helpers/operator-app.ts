/**
 * The real app with the real file logger (pino-roll into a temp LOG_DIR), for tests that read the
 * log files: audit lines, secret canaries, the log endpoints.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { RouteOptions } from 'fastify';
import { loadConfig, type Config } from '../../src/config/env.js';
import { createServices, type ServiceOptions, type Services } from '../../src/services.js';
import { buildApp } from '../../src/app.js';
import { closeLogger, createLogger, flushLogger } from '../../src/platform/logging/logger.js';
import type { App } from '../../src/http/types.js';
import { freshDatabase, tempDir, type TestDatabase } from './stores.js';
import type { KyselyBackedStore } from '../../src/storage/kysely/store.js';
import { OPERATOR } from './services.js';

export interface LoggedApp {
  app: App;
  services: Services;
  db: TestDatabase;
  /** The store the services use, with its query builder (to seed or inspect rows directly). */
  store: KyselyBackedStore;
  logDir: string;
  /** Every registered route (HEAD included), in registration order. */
  routes: RouteOptions[];
  /** Flushes the logger and returns every line written so far, parsed. */
  lines(): Promise<Array<Record<string, unknown>>>;
  /** Flushes the logger and returns the raw text of every file in LOG_DIR. */
  rawLogs(): Promise<string>;
  close(): Promise<void>;
}

export async function makeLoggedApp(
  kind: 'sqlite' | 'postgres',
  env: Record<string, string> = {},
  serviceOptions: ServiceOptions = {},
  operator = OPERATOR,
): Promise<LoggedApp> {
  const root = tempDir('paylink-ops-');
  const logDir = path.join(root, 'logs');
  const db = freshDatabase(kind);
  const config: Config = { ...loadConfig({ PORT: '0', LOG_DIR: logDir, ...env }), database: db.config };
  const logger = await createLogger({
    level: config.logLevel,
    logDir,
    stdout: false,
    secrets: [
      config.gateway.serverKey,
      config.gateway.clientKey,
      config.erp.webhookSecret,
      operator.pass,
      ...config.apiKeys,
    ],
  });
  const store = await db.open({ logger });
  const services = createServices(
    config,
    { logger, store, operator },
    { simulatorBaseUrl: 'http://127.0.0.1:9', ...serviceOptions },
  );
  const routes: RouteOptions[] = [];
  const app = await buildApp(services, { onRoute: (r) => routes.push(r) });
  await app.ready();
  const flush = async () => {
    await flushLogger(logger);
  };
  const rawLogs = async () => {
    await flush();
    return fs
      .readdirSync(logDir)
      .filter((f) => /^paylink\..*\.log$/.test(f) && fs.lstatSync(path.join(logDir, f)).isFile())
      .map((f) => fs.readFileSync(path.join(logDir, f), 'utf8'))
      .join('\n');
  };
  let closed = false;
  return {
    app,
    services,
    db,
    store,
    logDir,
    routes,
    rawLogs,
    async lines() {
      const text = await rawLogs();
      return text
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      await services.close();
      await closeLogger(logger);
      await db.dispose();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
