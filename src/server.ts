import net from 'node:net';
import { pathToFileURL } from 'node:url';
import { loadConfig, configSecretValues, ConfigError, SIMULATOR_DEV_SERVER_KEY, type Config } from './config/env.js';
import { createLogger, registerLogSecrets, closeLogger } from './platform/logging/logger.js';
import { openStore, MigrationError, lockSqliteFile, type SqliteLock } from './storage/kysely/store.js';
import { createServices, type Services } from './services.js';
import { buildApp } from './app.js';
import { stopTracing } from './platform/tracing.js';
import { resolveOperatorCredentials } from './config/operator-credentials.js';
import { weakSecrets } from './config/secret-strength.js';
import { ConfigKeyError, resolveEncryptionKeys } from './platform/secret-box.js';
import type { RunningSimulator, SnapBiOptions } from '../simulator/index.js';
import { createPublicKey, generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import type { App } from './http/types.js';
import type { Store } from './storage/contract.js';
import type { EmbeddedGateway, EmbeddedMerchant, EmbeddedMerchantProblem } from './types.js';
import { registerEmbeddedMerchants } from './domain/accounts/embedded-merchants.js';

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
  // Production refuses to start with any of these (env.ts); elsewhere each is said once.
  if (!config.isProduction)
    for (const weak of weakSecrets(config))
      notice(weak.variable, `${weak.message} (production refuses to start with it)`);
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

/** A port the service or its embedded simulator cannot listen on: one line each, naming the variable that chose it. */
export class ListenError extends Error {
  constructor(public readonly problems: string[]) {
    super(problems.join('; '));
    this.name = 'ListenError';
  }
}

interface PortWords {
  /** The port, as the operator knows it. */
  what: (port: number) => string;
  variable: string;
  /** Said after the advice to change it, when the port was not chosen directly. */
  note?: string;
}
const PORT_WORDS: PortWords = { what: (port) => `PORT ${port}`, variable: 'PORT' };
const SIMULATOR_PORT_WORDS: PortWords = {
  what: (port) => `the gateway simulator's port ${port}`,
  variable: 'SIMULATOR_PORT',
  note: ' (it defaults to PORT + 1)',
};

/** The port is taken, in words. */
function portTaken(words: PortWords, host: string, port: number): ListenError {
  return new ListenError([
    `${words.what(port)} on ${host} is already in use by another process: stop it or set ${words.variable} to a free port${words.note ?? ''}`,
  ]);
}

/** The listen error in words (a ListenError), or the error itself when it is not about the port. */
function listenProblem(err: unknown, words: PortWords, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') return portTaken(words, host, port);
  if (code === 'EACCES')
    return new ListenError([
      `${words.what(port)} on ${host} needs privileges this user lacks (ports below 1024 do): set ${words.variable} to a port of 1024 or above${words.note ?? ''}`,
    ]);
  return err;
}

/** Whether something listens on host:port now (a bind that fails with EADDRINUSE); port 0 never is. */
function portInUse(host: string, port: number): Promise<boolean> {
  if (port === 0) return Promise.resolve(false);
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'EADDRINUSE'));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(false)));
  });
}

/**
 * Simulator mode: the embedded simulator's modules and its BI-SNAP signing key (a fresh 2048-bit RSA
 * pair each start, as the simulator makes when given none), both started before the store opens so
 * that they overlap its work: the key is made on libuv's thread pool, not the event loop (about
 * 0.3 s of CPU on a 2-core machine, which made in the simulator would be spent on the event loop
 * after the store opened), and the modules load while the migrations wait for the database.
 */
function prepareSimulator() {
  const parts = Promise.all([
    import('../simulator/index.js'),
    promisify(generateKeyPair)('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    }),
  ]);
  // Awaited where the simulator starts; a start that fails before that must not leave it unhandled.
  parts.catch(() => undefined);
  return parts;
}

export async function startService(config: Config, opts: { stdoutLogs?: boolean } = {}): Promise<RunningService> {
  // Loaded only in simulator mode: a service against Midtrans never runs it.
  const simulatorParts = config.gateway.mode === 'simulator' ? prepareSimulator() : undefined;
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
  if (simulatorParts) {
    try {
      const [{ startSimulator }, ownKey] = await simulatorParts;
      simulator = await startSimulator({
        serverKey: config.gateway.serverKey ?? SIMULATOR_DEV_SERVER_KEY,
        notificationUrl: `${config.publicBaseUrl}/webhook/midtrans`,
        host: config.host,
        port: config.simulatorPort,
        // Embedded, the simulator's request lines would double every gateway call's own line: warnings only.
        logger: logger.child({ component: 'simulator' }, { level: 'warn' }),
        snapBi: { ...embeddedSnapBi(config), privateKey: ownKey.privateKey },
      });
    } catch (err) {
      await store.close();
      fileLock?.release();
      await closeLogger(logger);
      // The simulator binds first; when the service's own port is taken too (another paylink
      // running, most often), that is said first, as it is the one the operator chose.
      const problem = listenProblem(err, SIMULATOR_PORT_WORDS, config.host, config.simulatorPort);
      if (!(problem instanceof ListenError)) throw err;
      if (!(await portInUse(config.host, config.port))) throw problem;
      throw new ListenError([...portTaken(PORT_WORDS, config.host, config.port).problems, ...problem.problems]);
    }
  }
  // Where the accounts' merchants notify: the public URL, or the running address when PORT=0.
  let notifyBase = config.publicBaseUrl;
  const services = createServices(
    withSimulatorSnapBiKey(config, simulator),
    { logger, store, operator, configKeys },
    {
      simulatorBaseUrl: simulator?.baseUrl,
      embeddedGateway: simulator ? embeddedGatewayOf(simulator, () => notifyBase) : undefined,
    },
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
  await serveAccountsOnSimulator(services);
  const app = await buildApp(services);
  let address: string;
  try {
    address = await listenQuietly(app, config);
  } catch (err) {
    await app.close();
    await services.close();
    await simulator?.close();
    fileLock?.release();
    await closeLogger(logger);
    throw listenProblem(err, PORT_WORDS, config.host, config.port);
  }
  if (simulator && config.port === 0) {
    simulator.setNotificationUrl(`${address}/webhook/midtrans`);
    simulator.setSnapBiNotificationUrl(`${address}/webhook/snap-bi`);
    notifyBase = address;
    await serveAccountsOnSimulator(services);
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
    const lines =
      err instanceof MigrationError
        ? [err.message]
        : err instanceof ListenError
          ? err.problems
          : [`start-up failed: ${err instanceof Error ? err.message : String(err)}`];
    for (const line of lines) console.error(`paylink: ${line}`);
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

/**
 * The embedded simulator as the accounts' domain sees it: each account is a merchant named after
 * it, notifying `/webhook/midtrans/{account}`. The simulator names the environment's merchant
 * "the default merchant"; to an operator that is the account `default`.
 */
function embeddedGatewayOf(simulator: RunningSimulator, notifyBase: () => string): EmbeddedGateway {
  const name = (account: string) => `account ${account}`;
  const options = (account: string, m: EmbeddedMerchant) => ({
    ...m,
    notificationUrl: `${notifyBase().replace(/\/+$/, '')}/webhook/midtrans/${encodeURIComponent(account)}`,
  });
  return {
    merchantProblems: (account, m) =>
      simulator.merchantProblems(name(account), options(account, m)).map((line) => {
        const message = line.replaceAll('the default merchant', 'account default');
        const field = /\b(server_key|client_key|merchant_id)\b/.exec(message)?.[1] as
          EmbeddedMerchantProblem['field'] | undefined;
        return field ? { field, message } : { message };
      }),
    merchantFor: (account, m) => simulator.upsertMerchant(name(account), options(account, m)),
    dropMerchant: (account) => {
      simulator.removeMerchant(name(account));
    },
  };
}

/** The accounts in simulator mode served by the embedded simulator; database trouble now is the requests' business later. */
async function serveAccountsOnSimulator(services: Services): Promise<void> {
  try {
    await registerEmbeddedMerchants(services);
  } catch (err) {
    services.logger.warn(
      { err: err instanceof Error ? err.message : String(err) },
      'the embedded simulator could not read the accounts: those in simulator mode are served once their configuration is saved again',
    );
  }
}

/** In simulator mode the gateway's BI-SNAP public key is the simulator's, unless one was configured. */
function withSimulatorSnapBiKey(config: Config, simulator: RunningSimulator | undefined): Config {
  if (!simulator || config.gateway.snapBi.publicKey) return config;
  return {
    ...config,
    gateway: { ...config.gateway, snapBi: { ...config.gateway.snapBi, publicKey: simulator.snapBiPublicKey } },
  };
}
