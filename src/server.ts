import { pathToFileURL } from 'node:url';
import { loadConfig, configSecretValues, ConfigError, SIMULATOR_DEV_SERVER_KEY, type Config } from './config/env.js';
import { createLogger, registerLogSecrets, closeLogger } from './platform/logging/logger.js';
import { openStore, MigrationError, lockSqliteFile, type SqliteLock } from './storage/kysely/store.js';
import { createServices, type Services } from './services.js';
import { buildApp } from './app.js';
import { stopTracing } from './platform/tracing.js';
import { resolveOperatorCredentials } from './config/operator-credentials.js';
import { ConfigKeyError, resolveEncryptionKeys } from './platform/secret-box.js';
import { startSimulator, type RunningSimulator, type SnapBiOptions } from '../simulator/index.js';
import { createPublicKey } from 'node:crypto';
import type { App } from './http/types.js';
import type { Store } from './storage/contract.js';

export interface RunningService {
  app: App;
  services: Services;
  url: string;
  simulator?: RunningSimulator;
  stop(): Promise<void>;
}

/**
 * The insecure or inert defaults in force, one warning each, logged once at start-up (production
 * refuses to start with the insecure ones, see config.ts). The ERP URL and the gateway mode are the
 * effective ones: the runtime configuration may have set them.
 */
export function startupNotices(
  config: Config,
  o: { operatorGenerated: boolean; operatorUser: string; erpNotifyUrl: string | undefined; gatewayMode: string },
): Array<{ message: string; fields: Record<string, unknown> }> {
  const out: Array<{ message: string; fields: Record<string, unknown> }> = [];
  const notice = (setting: string, message: string, fields: Record<string, unknown> = {}) =>
    out.push({ message, fields: { setting, ...fields } });
  if (config.apiKeys.length === 0)
    notice(
      'API_KEYS',
      'API_KEYS is not set: the ERP endpoints (/createtransaksi, /api/payment-links, /api/charge, …) answer anyone who can reach this port',
    );
  if (!o.erpNotifyUrl)
    notice(
      'ERP_NOTIFY_URL',
      'ERP_NOTIFY_URL is not set: ERP events are not pushed; they wait for the pull feed (GET /api/erp-events) and pile up until it is read',
    );
  if (o.gatewayMode === 'simulator')
    notice(
      'MIDTRANS_MODE',
      'MIDTRANS_MODE is simulator: payments go to the built-in gateway simulator, no money moves (set MIDTRANS_MODE=sandbox and MIDTRANS_SERVER_KEY for Midtrans)',
    );
  if (o.operatorGenerated)
    notice(
      'log_pass',
      `operator credentials generated and kept in ${config.dataDir} (password printed on stderr; set log_user and log_pass to choose them)`,
      { operator_user: o.operatorUser },
    );
  if (config.exposeDevApi)
    notice(
      'LOG_EXPOSE_API',
      'LOG_EXPOSE_API is on: the Dev/Test endpoints (/echo, /echo2, /test-notify-erp) are served',
    );
  return out;
}

/** Starts everything `npm start` starts; also used by end-to-end tests with a prepared config. */
/**
 * Fastify logs a "Server listening at" line of its own for every address it listens on; paylink's
 * one "paylink listening" line after start-up says that and where the console, the reference and
 * the simulator are, so Fastify's lines are left out (nothing else logs while it binds).
 */
async function listenQuietly(app: Awaited<ReturnType<typeof buildApp>>, config: Config): Promise<string> {
  const level = app.log.level;
  app.log.level = 'warn';
  try {
    return await app.listen({ port: config.port, host: config.host });
  } finally {
    app.log.level = level;
  }
}

export async function startService(config: Config, opts: { stdoutLogs?: boolean } = {}): Promise<RunningService> {
  const logger = await createLogger({
    level: config.logLevel,
    logDir: config.logDir,
    stdout: opts.stdoutLogs ?? true,
    secrets: [...configSecretValues(config), config.operator.pass],
  });
  const operator = resolveOperatorCredentials(config);
  const configKeys = resolveEncryptionKeys(config);
  registerLogSecrets(logger, [operator.pass]);
  // Before anything touches the file: a second process on it must not start (see sqlite-lock.ts).
  const fileLock: SqliteLock | undefined =
    config.database.kind === 'sqlite' ? lockSqliteFile(config.database.path) : undefined;
  let store: Store;
  try {
    store = await openStore(config.database, { logger });
  } catch (err) {
    fileLock?.release();
    throw err;
  }
  let simulator: RunningSimulator | undefined;
  if (config.gateway.mode === 'simulator') {
    simulator = await startSimulator({
      serverKey: config.gateway.serverKey ?? SIMULATOR_DEV_SERVER_KEY,
      notificationUrl: `${config.publicBaseUrl}/webhook/midtrans`,
      host: config.host,
      port: config.simulatorPort,
      // Embedded, the simulator's request lines would double every gateway call's own line: warnings only.
      logger: logger.child({ component: 'simulator' }, { level: 'warn' }),
      snapBi: embeddedSnapBi(config),
    });
  }
  const services = createServices(
    withSimulatorSnapBiKey(config, simulator),
    { logger, store, operator, configKeys },
    { simulatorBaseUrl: simulator?.baseUrl },
  );
  // Secrets set earlier through /api/config live in the database, encrypted, not in the
  // environment. Reading them now makes a wrong CONFIG_ENCRYPTION_KEY a start-up error, rewrites
  // those stored in plain text or under a previous key, and registers them with the log scrubber
  // before anything could log them.
  try {
    if (await services.runtimeConfig.reencrypt())
      logger.info('runtime-config secrets re-encrypted with the current CONFIG_ENCRYPTION_KEY');
    await services.runtimeConfig.current();
  } catch (err) {
    if (err instanceof ConfigKeyError) {
      await services.close();
      await simulator?.close();
      fileLock?.release();
      await closeLogger(logger);
      throw err;
    }
    // Database trouble at this moment is the requests' and workers' business, as it is later.
  }
  if (configKeys.generated)
    logger.info(
      `runtime-config secrets are encrypted with a key kept in ${config.dataDir} (set CONFIG_ENCRYPTION_KEY to choose it; required in production)`,
    );
  const app = await buildApp(services);
  const address = await listenQuietly(app, config);
  if (simulator && config.port === 0) {
    simulator.setNotificationUrl(`${address}/webhook/midtrans`);
    simulator.setSnapBiNotificationUrl(`${address}/webhook/snap-bi`);
  }
  for (const w of services.workers) w.start();
  if (operator.generated) {
    // The password goes to the terminal only: the log files must never hold it.
    process.stderr.write(`paylink: operator user "${operator.user}", password: ${operator.pass}\n`);
  }
  const runtimeConfig = await services.runtimeConfig.current().catch(() => undefined);
  const base = config.port === 0 ? address : config.publicBaseUrl;
  for (const notice of startupNotices(config, {
    operatorGenerated: operator.generated,
    operatorUser: operator.user,
    erpNotifyUrl: runtimeConfig ? runtimeConfig.erp.notify_url : config.erp.notifyUrl,
    gatewayMode: runtimeConfig?.gateway.mode ?? config.gateway.mode,
  })) {
    logger.warn(notice.fields, notice.message);
  }
  logger.info(
    {
      url: address,
      console: `${base}/console`,
      docs: `${base}/docs`,
      database: store.kind,
      gateway_mode: config.gateway.mode,
      simulator: simulator?.baseUrl,
    },
    `paylink listening on ${address}: console ${base}/console, API reference ${base}/docs${simulator ? `, gateway simulator ${simulator.baseUrl}` : ''}`,
  );
  let stopping: Promise<void> | undefined;
  return {
    app,
    services,
    url: address,
    simulator,
    stop() {
      stopping ??= (async () => {
        await app.close();
        await services.close();
        await simulator?.close();
        fileLock?.release();
        logger.info('shutdown finished: requests answered, workers stopped, database closed');
        await stopTracing();
        await closeLogger(logger);
      })();
      return stopping;
    },
  };
}

/**
 * `paylink serve`: reads the configuration, starts the service and stops it on SIGTERM or SIGINT.
 * A configuration or start-up problem prints its message and exits 1.
 */
export async function serve(env: Record<string, string | undefined> = process.env): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`paylink: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  let running: RunningService;
  try {
    running = await startService(config);
  } catch (err) {
    const msg =
      err instanceof MigrationError
        ? err.message
        : `start-up failed: ${err instanceof Error ? err.message : String(err)}`;
    console.error(`paylink: ${msg}`);
    process.exit(1);
  }
  const shutdown = (signal: string) => {
    running.services.logger.info({ signal }, 'shutting down: draining requests and stopping workers');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    running.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

const isEntry = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isEntry) void serve();

/**
 * The embedded simulator's BI-SNAP merchant is paylink's own: the same client id, secret and
 * partner id, the public half of paylink's private key to verify token requests, and paylink's
 * notification base URL. A private key that does not parse leaves token requests refused (the
 * runtime config reports the key).
 */
function embeddedSnapBi(config: Config): SnapBiOptions {
  const b = config.gateway.snapBi;
  const o: SnapBiOptions = {
    clientId: b.clientId ?? 'simulator-snap-bi-client',
    clientSecret: b.clientSecret ?? 'simulator-snap-bi-secret',
    partnerId: b.partnerId ?? 'simulator-partner',
    notificationUrl: `${config.publicBaseUrl}/webhook/snap-bi`,
  };
  if (b.privateKey) {
    try {
      o.merchantPublicKey = createPublicKey(b.privateKey).export({ type: 'spki', format: 'pem' }).toString();
    } catch {
      // Reported by the runtime config's key check.
    }
  }
  return o;
}

/** In simulator mode the gateway's BI-SNAP public key is the simulator's, unless one was configured. */
function withSimulatorSnapBiKey(config: Config, simulator: RunningSimulator | undefined): Config {
  if (!simulator || config.gateway.snapBi.publicKey) return config;
  return {
    ...config,
    gateway: { ...config.gateway, snapBi: { ...config.gateway.snapBi, publicKey: simulator.snapBiPublicKey } },
  };
}
