import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Logger } from 'pino';
import type { SimContext } from './context.js';
import { defaultFaults, type CoreHttpStatus } from './faults.js';
import { registerGatewayHooks } from './gateway-hooks.js';
import { HOSTED_CSP, messagePage, tr } from './html.js';
import { negotiateLang, type Lang } from './i18n/index.js';
import { areaOf, coreError, safeRequestSerializer } from './http.js';
import { seededRandom } from './lib/rng.js';
import { isObject } from './lib/validate.js';
import { Notifier } from './notifier.js';
import { registerActions } from './routes/actions.js';
import { registerCardTokens } from './routes/card-tokens.js';
import { registerCharge } from './routes/charge.js';
import { registerCompletionPages } from './routes/completion.js';
import { registerControl } from './routes/control.js';
import { registerHosted } from './routes/hosted.js';
import { registerPayAccountPages, registerPayAccounts } from './routes/pay-accounts.js';
import { registerPaymentLinks } from './routes/payment-links.js';
import { registerSnap } from './routes/snap.js';
import { registerSubscriptions } from './routes/subscriptions.js';
import { registerTransactionRoutes } from './routes/transactions.js';
import { merchantListProblems, type NamedMerchant } from './merchant-config.js';
import { Merchant, Merchants } from './merchants.js';
import { DEFAULT_MERCHANT_ID, RequestLog, type MerchantSettings } from './state.js';
import { registerSnapBi, type SnapBiOptions } from './snap-bi/index.js';

/** A merchant beside the default one: its own keys, MID and (optionally) notification URL. */
export interface MerchantOptions {
  serverKey: string;
  clientKey?: string;
  merchantId: string;
  notificationUrl?: string;
}

export interface SimulatorOptions {
  /** The default merchant's server key. */
  serverKey: string;
  /** The merchant client key the card paths accept as `client_key`; default `SB-Mid-client-simulator`. */
  clientKey?: string;
  /** The default merchant's MID; default `G123456789`. */
  merchantId?: string;
  /** More merchants, each with a ledger of its own; a key or MID used twice is refused. */
  merchants?: readonly MerchantOptions[];
  /** Where the default merchant's notifications go, and those of a merchant without a URL of its own. */
  notificationUrl?: string;
  timeScale?: number;
  publicBaseUrl?: string;
  logger?: boolean | Logger;
  seed?: number;
  /** Per-attempt notification timeout; the real notifier waits 15 s. */
  notificationTimeoutMs?: number;
  /** Initial (and reset) value of the `core_http_status` fault setting; default `mirror`. */
  coreHttpStatus?: CoreHttpStatus;
  /** The BI-SNAP merchant; unset: default credentials, no token accepted, a generated signing key. */
  snapBi?: SnapBiOptions;
}

export interface BuiltSimulator {
  app: FastifyInstance;
  setNotificationUrl(url: string | undefined): void;
  setBaseUrl(url: string): void;
  /** The public half of the simulator's BI-SNAP signing key (PEM). */
  snapBiPublicKey: string;
  setSnapBiNotificationUrl(url: string | undefined): void;
  /**
   * Serves a merchant beside those it started with, under `name` (its owner's, such as an
   * account's id): a ledger of its own, its keys, MID and notification URL. The same name again
   * replaces its settings and keeps its ledger. Throws, naming the field, when a problem of
   * `merchantProblems` stands (a key or MID another merchant uses); nothing changes then.
   */
  upsertMerchant(name: string, merchant: MerchantOptions): void;
  /** What `upsertMerchant` would refuse, one sentence each (empty: it would take the merchant). */
  merchantProblems(name: string, merchant: MerchantOptions): string[];
  /** Stops serving the merchant `upsertMerchant` added under `name` (its ledger goes); false when none. */
  removeMerchant(name: string): boolean;
  stop(): void;
}

const EXPIRY_SWEEP_MS = 250;

function createApp(opts: SimulatorOptions): FastifyInstance {
  const base = { forceCloseConnections: true, bodyLimit: 1_048_576, routerOptions: { ignoreTrailingSlash: true } };
  // Card data arrives in the /v2/token query: the request log line masks it.
  const serializers = { req: safeRequestSerializer };
  if (typeof opts.logger === 'object') {
    return Fastify<Server, IncomingMessage, ServerResponse, FastifyBaseLogger>({
      ...base,
      loggerInstance: opts.logger.child({}, { serializers }),
    });
  }
  return Fastify({ ...base, logger: opts.logger === true ? { serializers } : false });
}

function badJson(): Error {
  return Object.assign(new Error('Invalid JSON data provided.'), { statusCode: 400, code: 'SIM_BAD_JSON' });
}

/** The gateway reads every API body as JSON, whatever its content type. */
function parseJsonBody(
  _req: FastifyRequest,
  body: string | Buffer,
  done: (err: Error | null, body?: unknown) => void,
): void {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  // Clients such as midtrans-client send an empty or "null" body on cancel/expire.
  if (text.trim() === '') return done(null, undefined);
  try {
    done(null, JSON.parse(text));
  } catch {
    done(badJson(), undefined);
  }
}

function registerParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody);
  // The hosted, 3DS and redirect pages post forms.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(typeof body === 'string' ? body : body.toString('utf8'))));
  });
  app.addContentTypeParser('*', { parseAs: 'string' }, parseJsonBody);
}

function errorBody(
  req: FastifyRequest,
  status: number,
  message: string,
): { status: number; body: unknown; html?: boolean } {
  const area = areaOf(req.url);
  const bad = status === 400;
  if (area === 'core')
    return {
      status,
      body: coreError(
        bad ? '413' : String(status),
        bad ? 'The request cannot be processed due to malformed syntax in the request body' : message,
      ),
    };
  if (area === 'snap' || area === 'payment_link')
    return { status, body: { error_messages: [bad ? 'Invalid JSON data provided.' : message] } };
  if (area === 'hosted')
    return { status, body: messagePage(tr(langOfPage(req))('error.title'), message, langOfPage(req)), html: true };
  return { status, body: { error: bad ? 'bad_request' : 'error', message } };
}

/** An error page's language: as the hosted pages choose it, without remembering anything. */
function langOfPage(req: FastifyRequest): Lang {
  const query = isObject(req.query) ? req.query.lang : undefined;
  return negotiateLang({
    query,
    cookieHeader: req.headers.cookie,
    acceptLanguage: req.headers['accept-language'],
    secure: false,
  }).lang;
}

function send(reply: FastifyReply, r: { status: number; body: unknown; html?: boolean }): FastifyReply {
  if (r.html) reply.type('text/html; charset=utf-8').header('content-security-policy', HOSTED_CSP);
  return reply.code(r.status).send(r.body);
}

function registerFallbacks(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const status = err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    if (status >= 500) req.log.error({ err }, 'simulator error');
    return send(reply, errorBody(req, status, status >= 500 ? 'Internal server error' : err.message));
  });
  app.setNotFoundHandler((req, reply) => {
    const area = areaOf(req.url);
    if (area === 'snap' || area === 'payment_link') return reply.code(404).send({ error_messages: ['Not Found'] });
    if (area === 'hosted') {
      const lang = langOfPage(req);
      return send(reply, {
        status: 404,
        body: messagePage(tr(lang)('notFound.title'), tr(lang)('notFound.page'), lang),
        html: true,
      });
    }
    if (area === 'control')
      return reply.code(404).send({ error: 'not_found', message: `no route ${req.method} ${req.url}` });
    // Unknown gateway paths get the Spring-style body the real API sends for a broken path.
    return reply.code(404).send({
      timestamp: new Date().toISOString(),
      status: 404,
      error: 'Not Found',
      message: 'Not Found',
      path: req.url.split('?')[0],
    });
  });
}

/** The default merchant first, then the others; a problem (a bad or shared key or MID) names its entry. */
function merchantList(opts: SimulatorOptions): NamedMerchant[] {
  const list: NamedMerchant[] = [
    {
      name: 'the default merchant',
      settings: {
        serverKey: opts.serverKey,
        clientKey: opts.clientKey ?? 'SB-Mid-client-simulator',
        merchantId: opts.merchantId ?? DEFAULT_MERCHANT_ID,
      },
    },
    ...(opts.merchants ?? []).map((m, i) => ({ name: `merchants[${i}]`, settings: { ...m } })),
  ];
  const problems = merchantListProblems(list);
  if (problems.length > 0) throw new Error(`simulator: ${problems.join('; ')}`);
  return list;
}

export function buildSimulator(opts: SimulatorOptions): BuiltSimulator {
  const named = merchantList(opts);
  const app = createApp(opts);
  const random = seededRandom(opts.seed ?? Date.now());
  const faultsDefault = (): ReturnType<typeof defaultFaults> => defaultFaults(opts.coreHttpStatus ?? 'mirror');
  const config = {
    notificationUrl: opts.notificationUrl,
    timeScale: opts.timeScale ?? 1,
    baseUrl: (opts.publicBaseUrl ?? 'http://127.0.0.1').replace(/\/+$/, ''),
  };
  const holder: { ctx?: SimContext } = {};
  const notifier = new Notifier({
    notificationUrl: () => config.notificationUrl,
    timeScale: () => config.timeScale,
    random,
    faults: () => holder.ctx?.faults ?? faultsDefault(),
    timeoutMs: opts.notificationTimeoutMs ?? 15_000,
    logger: app.log,
  });
  const [first, ...rest] = named.map((m) => new Merchant(m.settings, notifier, () => config.baseUrl));
  if (!first) throw new Error('simulator: no merchant');
  const merchants = new Merchants(first, rest);
  const started = named.map((n, i) => ({ name: n.name, merchant: i === 0 ? first : rest[i - 1] }));
  // Merchants added while running, by their owner's name.
  const added = new Map<string, Merchant>();
  const problemsWith = (name: string, m: MerchantOptions): string[] => {
    const others: NamedMerchant[] = [
      ...started.flatMap((s) => (s.merchant ? [{ name: s.name, settings: s.merchant.settings }] : [])),
      ...[...added].filter(([n]) => n !== name).map(([n, merchant]) => ({ name: n, settings: merchant.settings })),
    ];
    return merchantListProblems([...others, { name, settings: { ...m } }]);
  };
  const ctx: SimContext = {
    merchants,
    notifier,
    requests: new RequestLog(),
    config,
    faults: faultsDefault(),
    defaultFaults: faultsDefault,
    random,
    holds: new Set(),
  };
  holder.ctx = ctx;
  registerParsers(app);
  registerFallbacks(app);
  void app.register(async (scope) => {
    registerGatewayHooks(scope, ctx);
    registerPaymentLinks(scope, ctx);
    registerSnap(scope, ctx);
    registerCharge(scope, ctx);
    registerCardTokens(scope, ctx);
    registerTransactionRoutes(scope, ctx);
    registerSubscriptions(scope);
    registerPayAccounts(scope, ctx);
  });
  registerHosted(app, ctx);
  registerCompletionPages(app, ctx);
  registerPayAccountPages(app, ctx);
  registerActions(app, ctx);
  registerControl(app, ctx);
  const snapBi = registerSnapBi(app, ctx, opts.snapBi);
  app.get('/', async () => ({ name: 'midtrans-simulator', base_url: config.baseUrl }));
  const sweep = setInterval(() => merchants.expireDue(Date.now()), EXPIRY_SWEEP_MS);
  sweep.unref();
  return {
    app,
    setNotificationUrl: (url) => {
      config.notificationUrl = url;
    },
    setBaseUrl: (url) => {
      config.baseUrl = url.replace(/\/+$/, '');
    },
    snapBiPublicKey: snapBi.publicKeyPem,
    setSnapBiNotificationUrl: snapBi.setNotificationUrl,
    merchantProblems: problemsWith,
    upsertMerchant: (name, m) => {
      const problems = problemsWith(name, m);
      if (problems.length > 0) throw new Error(`simulator: ${problems.join('; ')}`);
      const settings: MerchantSettings = { serverKey: m.serverKey, merchantId: m.merchantId };
      if (m.clientKey !== undefined) settings.clientKey = m.clientKey;
      if (m.notificationUrl !== undefined) settings.notificationUrl = m.notificationUrl;
      const existing = added.get(name);
      if (existing) {
        // The engine holds this object: new keys sign the ledger's later notifications.
        delete existing.settings.clientKey;
        delete existing.settings.notificationUrl;
        Object.assign(existing.settings, settings);
        return;
      }
      const merchant = new Merchant(settings, notifier, () => config.baseUrl);
      added.set(name, merchant);
      merchants.add(merchant);
    },
    removeMerchant: (name) => {
      const merchant = added.get(name);
      if (!merchant) return false;
      added.delete(name);
      merchants.remove(merchant);
      return true;
    },
    stop: () => {
      clearInterval(sweep);
      for (const release of [...ctx.holds]) release();
      void notifier.stop();
      void snapBi.stop();
    },
  };
}
