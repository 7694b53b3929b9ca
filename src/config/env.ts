import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import fs from 'node:fs';
import path from 'node:path';
import { postgresTarget } from '../platform/postgres-url.js';
import { isIP } from 'node:net';
import { parseEncryptionKey } from '../platform/secret-box.js';
import {
  AllowedNetworks,
  CONTROL_CHARACTER,
  cidrListProblem,
  outboundUrlProblem,
  type PrivatePolicy,
} from '../platform/url-policy.js';
import { plainFieldErrors } from '../platform/errors.js';
import { GatewayModeSchema, type GatewayMode } from '../model/runtime-config.js';
import type { SecretVariable } from '../platform/secrets.js';
import { resolveSecretFiles } from './secret-files.js';
import { weakSecretProblems } from './secret-strength.js';

const isGatewayMode = (v: string | undefined): v is GatewayMode => v !== undefined && Value.Check(GatewayModeSchema, v);

/** Raw environment, as strings: every variable the service reads; unknown variables are ignored. */
const Port = Type.String({ pattern: '^[0-9]{1,5}$' });
const Bool = Type.String({ pattern: '^(true|false|1|0|yes|no|on|off|TRUE|FALSE|True|False|YES|NO|Yes|No|ON|OFF)$' });
export const EnvSchema = Type.Object({
  PORT: Type.Optional(Port),
  HOST: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  PUBLIC_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^(postgres|postgresql)://' })),
  DATABASE_POOL_MAX: Type.Optional(Type.String()),
  DATA_DIR: Type.Optional(Type.String({ minLength: 1 })),
  LOG_DIR: Type.Optional(Type.String({ minLength: 1 })),
  LOG_LEVEL: Type.Optional(
    Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
  ),
  log_user: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  log_pass: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  LOG_USER: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  LOG_PASS: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  LOG_EXPOSE_API: Type.Optional(Bool),
  API_KEYS: Type.Optional(Type.String()),
  MIDTRANS_MODE: Type.Optional(GatewayModeSchema),
  MIDTRANS_SERVER_KEY: Type.Optional(Type.String({ minLength: 1, maxLength: 256, pattern: '^\\S+$' })),
  MIDTRANS_CLIENT_KEY: Type.Optional(Type.String({ minLength: 1, maxLength: 256, pattern: '^\\S+$' })),
  MIDTRANS_API_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  MIDTRANS_APP_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  MIDTRANS_CONFIRM_NOTIFICATIONS: Type.Optional(Bool),
  MIDTRANS_SNAP_BI_CLIENT_ID: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$' })),
  MIDTRANS_SNAP_BI_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 1, maxLength: 512, pattern: '^\\S+$' })),
  MIDTRANS_SNAP_BI_PARTNER_ID: Type.Optional(
    Type.String({ minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$' }),
  ),
  MIDTRANS_SNAP_BI_CHANNEL_ID: Type.Optional(Type.String({ maxLength: 5, pattern: '^[0-9]{5}$' })),
  MIDTRANS_SNAP_BI_PRIVATE_KEY: Type.Optional(Type.String({ minLength: 1, maxLength: 16_384 })),
  MIDTRANS_SNAP_BI_PUBLIC_KEY: Type.Optional(Type.String({ minLength: 1, maxLength: 16_384 })),
  MIDTRANS_SNAP_BI_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  SIMULATOR_PORT: Type.Optional(Port),
  ERP_NOTIFY_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  ERP_WEBHOOK_SECRET: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
  TRUST_PROXY: Type.Optional(Type.String({ maxLength: 2000 })),
  CONFIG_ENCRYPTION_KEY: Type.Optional(Type.String({ maxLength: 200 })),
  CONFIG_ENCRYPTION_KEY_PREVIOUS: Type.Optional(Type.String({ maxLength: 2000 })),
  CONSOLE_TIME_ZONE: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  ERP_ALLOW_PRIVATE_NETWORKS: Type.Optional(Type.String({ maxLength: 4000 })),
  OUTBOX_MAX_LANES: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$' })),
  RECONCILIATION_HISTORY_AT: Type.Optional(Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$' })),
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16, maxLength: 256, pattern: '^[\\x21-\\x7e]+$' })),
  NODE_ENV: Type.Optional(Type.String()),
});
const Str = Type.String();
const DatabaseConfigSchema = Type.Union([
  Type.Object({ kind: Type.Literal('sqlite'), path: Str }),
  /** `poolMax`: the connections the pool holds at most (`DATABASE_POOL_MAX`, 1–200; unset: 10). */
  Type.Object({ kind: Type.Literal('postgres'), url: Str, poolMax: Type.Optional(Type.Integer()) }),
]);
export type DatabaseConfig = Static<typeof DatabaseConfigSchema>;

/** The configuration the service runs with, read from the environment once by `loadConfig`. */
export const ConfigSchema = Type.Object({
  port: Type.Integer(),
  host: Str,
  /** How the outside world reaches the service; the gateway's notification URL is derived from it. */
  publicBaseUrl: Str,
  database: DatabaseConfigSchema,
  dataDir: Str,
  logDir: Str,
  logLevel: Str,
  /** Operator Basic-Auth credentials as configured; unset outside production → generated at start-up. */
  operator: Type.Object({ user: Type.Optional(Str), pass: Type.Optional(Str) }),
  exposeDevApi: Type.Boolean(),
  apiKeys: Type.Array(Str),
  gateway: Type.Object({
    mode: GatewayModeSchema,
    serverKey: Type.Optional(Str),
    clientKey: Type.Optional(Str),
    apiBaseUrl: Type.Optional(Str),
    appBaseUrl: Type.Optional(Str),
    /** Confirm every notification with the status API (default true; false only in simulator mode). */
    confirmNotifications: Type.Boolean(),
    /** BI-SNAP credentials (`MIDTRANS_SNAP_BI_*`); the keys as PEM text, read from their file when a path was given. */
    snapBi: Type.Object({
      clientId: Type.Optional(Str),
      clientSecret: Type.Optional(Str),
      partnerId: Type.Optional(Str),
      channelId: Type.Optional(Str),
      privateKey: Type.Optional(Str),
      publicKey: Type.Optional(Str),
      baseUrl: Type.Optional(Str),
    }),
  }),
  simulatorPort: Type.Integer(),
  erp: Type.Object({
    notifyUrl: Type.Optional(Str),
    webhookSecret: Type.Optional(Str),
    /**
     * `ERP_ALLOW_PRIVATE_NETWORKS`: CIDR ranges an ERP endpoint may be in although production refuses
     * private addresses (an on-premises ERP); link-local and metadata addresses never are. Empty: none.
     */
    allowPrivateNetworks: Type.Array(Str),
    /**
     * `OUTBOX_MAX_LANES`: deliveries in parallel at most, shared by the accounts' endpoints, each
     * of which starts at 16 and takes more only while it answers as fast with more (1–1024;
     * unset: the worker's default, 128).
     */
    maxLanes: Type.Optional(Type.Integer()),
  }),
  /**
   * Fastify's `trustProxy`: the reverse proxies whose `X-Forwarded-For` names the client (addresses,
   * CIDR ranges, or `loopback`/`linklocal`/`uniquelocal`), or how many hops to trust. Unset: none.
   */
  trustProxy: Type.Optional(Type.Union([Type.Array(Str), Type.Integer()])),
  /** Keys for runtime-config secrets at rest, as 64 hex characters (see secret-box.ts); no key outside production → generated into DATA_DIR. */
  configEncryption: Type.Object({ key: Type.Optional(Str), previous: Type.Array(Str) }),
  isProduction: Type.Boolean(),
  /** IANA time zone the operator console shows times in (`CONSOLE_TIME_ZONE`, default Asia/Jakarta). */
  consoleTimeZone: Str,
  /** `METRICS_TOKEN`: when set, `GET /metrics` also accepts `Authorization: Bearer <token>`. */
  metricsToken: Type.Optional(Str),
  /** Jakarta time of day (`HH:MM`) the previous day is reconciled from the gateway's history; default 03:00. */
  reconciliationHistoryAt: Type.Optional(Str),
});
export type Config = Static<typeof ConfigSchema>;

/** The fixed development key the embedded simulator accepts when no server key is configured. */
export const SIMULATOR_DEV_SERVER_KEY = 'SB-Mid-server-simulator';

/**
 * The one rule for the gateway server key, used at start-up (environment) and at run time
 * (`/api/config`): simulator mode needs none; sandbox and production need one, and not the
 * simulator's published development key, which no Midtrans account has (every call would fail,
 * and anyone could sign notifications with it). Undefined when the key is acceptable.
 */
export function serverKeyProblem(mode: GatewayMode, key: string | undefined): string | undefined {
  if (mode === 'simulator') return undefined;
  if (!key) return `a server key is required in ${mode} mode`;
  if (key === SIMULATOR_DEV_SERVER_KEY)
    return `the simulator's development key cannot be used in ${mode} mode: set the server key of your Midtrans account`;
  return undefined;
}

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

function validTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function truthy(v: string | undefined): boolean {
  return v !== undefined && /^(true|1|yes|on)$/i.test(v);
}

function portOf(v: string | undefined, fallback: number, name: string, problems: string[]): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) problems.push(`${name} must be a port number 0-65535 (got "${v}")`);
  return n;
}

/**
 * The most connections `DATABASE_POOL_MAX` may ask for. Each is a server process of its own, and
 * the server's `max_connections` (100 by default) is shared by every instance and client.
 */
export const POOL_MAX_LIMIT = 200;

/**
 * `DATABASE_POOL_MAX` as `{ poolMax }`: nothing when unset (the pool's default, 10) or refused (then
 * a problem). Judged with SQLite too, where it is not used: a bad value is refused wherever it is.
 */
function poolMaxOf(v: string | undefined, problems: string[]): { poolMax?: number } {
  if (v === undefined) return {};
  const n = /^[0-9]{1,3}$/.test(v.trim()) ? Number(v) : NaN;
  if (n >= 1 && n <= POOL_MAX_LIMIT) return { poolMax: n };
  const shown = v.length > 20 ? `${v.slice(0, 20)}…` : v;
  problems.push(`DATABASE_POOL_MAX must be a whole number from 1 to ${POOL_MAX_LIMIT} (got "${shown}")`);
  return {};
}

function envProblems(env: Record<string, string | undefined>): string[] {
  const picked: Record<string, string> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const v = env[key];
    if (v !== undefined && v !== '') picked[key] = v;
  }
  // Values are not echoed: some of these variables hold secrets. PORT and SIMULATOR_PORT are
  // judged (once) by portOf, with the range in its message.
  const issues = [...Value.Errors(EnvSchema, picked)].filter((e) => !/^\/(PORT|SIMULATOR_PORT)$/.test(e.instancePath));
  return plainFieldErrors(EnvSchema, issues).flatMap((e) => {
    // One line per problem, in words: a URL's shape is told by urlProblems (or here), never as a regex.
    if (e.path in URL_WORDS) return URL_WORDS[e.path] === null ? [] : [`${e.path} ${URL_WORDS[e.path]}`];
    return [`${e.path || 'environment'} ${e.message}`];
  });
}

/** What a URL variable must look like, in words; null where urlProblems says it already. */
const URL_WORDS: Record<string, string | null> = {
  PUBLIC_BASE_URL: 'must be an absolute http(s) URL such as https://pay.example.com',
  DATABASE_URL: 'must be a PostgreSQL URL such as postgres://user@host:5432/paylink',
  MIDTRANS_API_BASE_URL: null,
  MIDTRANS_APP_BASE_URL: null,
  MIDTRANS_SNAP_BI_BASE_URL: null,
  ERP_NOTIFY_URL: null,
  MIDTRANS_SNAP_BI_CHANNEL_ID: 'must be 5 digits (the channel id Midtrans issued)',
  MIDTRANS_SNAP_BI_CLIENT_ID: 'must be the client id Midtrans issued, without spaces',
  MIDTRANS_SNAP_BI_PARTNER_ID: 'must be the partner id Midtrans issued, without spaces',
  MIDTRANS_SNAP_BI_CLIENT_SECRET: 'must be the client secret Midtrans issued, without spaces',
};

/**
 * Reads the environment once. Its only I/O is reading the secret files named by `NAME_FILE`
 * (secret-files.ts); no defaults depend on the machine beyond `cwd`.
 */
export function loadConfig(given: Record<string, string | undefined>, cwd = process.cwd()): Config {
  const { env, problems: fileProblems } = resolveSecretFiles(given, cwd);
  const get = (k: string): string | undefined => {
    const v = env[k];
    return v === undefined || v === '' ? undefined : v;
  };
  const problems = [...fileProblems, ...envProblems(env)];
  const port = portOf(get('PORT'), 3000, 'PORT', problems);
  const host = get('HOST') ?? '127.0.0.1';
  const dataDir = path.resolve(cwd, get('DATA_DIR') ?? './data');
  const logDir = path.resolve(cwd, get('LOG_DIR') ?? './logs');
  const databaseUrl = get('DATABASE_URL');
  const pool = poolMaxOf(get('DATABASE_POOL_MAX'), problems);
  const serverKey = get('MIDTRANS_SERVER_KEY');
  const modeText = get('MIDTRANS_MODE');
  // An unknown mode is already a problem (the schema's); it is checked further as a gateway mode, not as the simulator.
  const mode: GatewayMode = isGatewayMode(modeText)
    ? modeText
    : modeText !== undefined || serverKey
      ? 'sandbox'
      : 'simulator';
  const isProduction = get('NODE_ENV') === 'production';
  const apiKeys = (get('API_KEYS') ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k.length > 0);
  const config: Config = {
    port,
    host,
    publicBaseUrl: (get('PUBLIC_BASE_URL') ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(
      /\/+$/,
      '',
    ),
    database: databaseUrl
      ? { kind: 'postgres', url: databaseUrl, ...pool }
      : { kind: 'sqlite', path: path.join(dataDir, 'paylink.db') },
    dataDir,
    logDir,
    logLevel: get('LOG_LEVEL') ?? 'info',
    operator: { user: get('log_user') ?? get('LOG_USER'), pass: get('log_pass') ?? get('LOG_PASS') },
    exposeDevApi: truthy(get('LOG_EXPOSE_API')),
    apiKeys,
    gateway: {
      mode,
      serverKey,
      clientKey: get('MIDTRANS_CLIENT_KEY'),
      apiBaseUrl: get('MIDTRANS_API_BASE_URL')?.replace(/\/+$/, ''),
      appBaseUrl: get('MIDTRANS_APP_BASE_URL')?.replace(/\/+$/, ''),
      confirmNotifications:
        get('MIDTRANS_CONFIRM_NOTIFICATIONS') === undefined || truthy(get('MIDTRANS_CONFIRM_NOTIFICATIONS')),
      snapBi: {
        clientId: get('MIDTRANS_SNAP_BI_CLIENT_ID'),
        clientSecret: get('MIDTRANS_SNAP_BI_CLIENT_SECRET'),
        partnerId: get('MIDTRANS_SNAP_BI_PARTNER_ID'),
        channelId: get('MIDTRANS_SNAP_BI_CHANNEL_ID'),
        privateKey: pemOrFile('MIDTRANS_SNAP_BI_PRIVATE_KEY', get('MIDTRANS_SNAP_BI_PRIVATE_KEY'), cwd, problems),
        publicKey: pemOrFile('MIDTRANS_SNAP_BI_PUBLIC_KEY', get('MIDTRANS_SNAP_BI_PUBLIC_KEY'), cwd, problems),
        baseUrl: get('MIDTRANS_SNAP_BI_BASE_URL')?.replace(/\/+$/, ''),
      },
    },
    simulatorPort: portOf(get('SIMULATOR_PORT'), port === 0 ? 0 : port + 1, 'SIMULATOR_PORT', problems),
    erp: {
      notifyUrl: get('ERP_NOTIFY_URL'),
      webhookSecret: get('ERP_WEBHOOK_SECRET'),
      allowPrivateNetworks: listOf(get('ERP_ALLOW_PRIVATE_NETWORKS')),
      maxLanes: get('OUTBOX_MAX_LANES') === undefined ? undefined : Number(get('OUTBOX_MAX_LANES')),
    },
    configEncryption: { previous: [] },
    isProduction,
    consoleTimeZone: get('CONSOLE_TIME_ZONE') ?? 'Asia/Jakarta',
    metricsToken: get('METRICS_TOKEN'),
    reconciliationHistoryAt: get('RECONCILIATION_HISTORY_AT') ?? '03:00',
  };
  if (!validTimeZone(config.consoleTimeZone))
    problems.push('CONSOLE_TIME_ZONE must be an IANA time zone name such as Asia/Jakarta');
  // An unknown mode is its own problem; what a key would need in a guessed mode is not one.
  const keyProblem = modeText === undefined || isGatewayMode(modeText) ? serverKeyProblem(mode, serverKey) : undefined;
  if (keyProblem) problems.push(`MIDTRANS_SERVER_KEY: ${keyProblem}`);
  // The signature does not cover transaction_status: only the status API can vouch for it.
  if (mode !== 'simulator' && !config.gateway.confirmNotifications)
    problems.push(`MIDTRANS_CONFIRM_NOTIFICATIONS can be off only in simulator mode (not ${mode})`);
  if (databaseUrl) problems.push(...databaseUrlProblems(databaseUrl));
  const maxLanes = config.erp.maxLanes;
  if (maxLanes !== undefined && !(Number.isInteger(maxLanes) && maxLanes >= 1 && maxLanes <= 1024))
    problems.push('OUTBOX_MAX_LANES must be a whole number from 1 to 1024');
  const cidrProblem = config.erp.allowPrivateNetworks.length > 0 && cidrListProblem(config.erp.allowPrivateNetworks);
  if (cidrProblem) problems.push(`ERP_ALLOW_PRIVATE_NETWORKS ${cidrProblem}`);
  else if (get('ERP_ALLOW_PRIVATE_NETWORKS') !== undefined && config.erp.allowPrivateNetworks.length === 0)
    problems.push('ERP_ALLOW_PRIVATE_NETWORKS must list CIDR ranges such as 10.20.0.0/16, comma-separated');
  problems.push(...urlProblems(env, isProduction, cidrProblem ? undefined : erpAllowedNetworks(config)));
  const encKey = get('CONFIG_ENCRYPTION_KEY');
  config.configEncryption.key = encKey === undefined ? undefined : parseEncryptionKey(encKey)?.toString('hex');
  if (encKey !== undefined && !config.configEncryption.key)
    problems.push('CONFIG_ENCRYPTION_KEY must be 32 bytes: 64 hex characters or base64 (e.g. `openssl rand -hex 32`)');
  for (const raw of (get('CONFIG_ENCRYPTION_KEY_PREVIOUS') ?? '').split(',').filter((k) => k.trim() !== '')) {
    const k = parseEncryptionKey(raw);
    if (k) config.configEncryption.previous.push(k.toString('hex'));
    else
      problems.push(
        'CONFIG_ENCRYPTION_KEY_PREVIOUS must list 32-byte keys (64 hex characters or base64), comma-separated',
      );
  }
  const proxy = trustProxyOf(get('TRUST_PROXY'));
  if (typeof proxy === 'string') problems.push(proxy);
  else if (proxy !== undefined) config.trustProxy = proxy;
  if (isProduction) problems.push(...productionProblems(config));
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/**
 * Every mode: no control character in any URL (the URL parser drops CR, LF and TAB silently, so
 * what is used would differ from what was configured), and the outbound URLs under the same
 * address policy as `/api/config` (never link-local or metadata; in production https only, and
 * never a loopback or private address). Values are not echoed.
 */
function urlProblems(
  env: Record<string, string | undefined>,
  production: boolean,
  erpAllowed: AllowedNetworks | undefined,
): string[] {
  const out: string[] = [];
  const publicUrl = env.PUBLIC_BASE_URL;
  if (publicUrl && CONTROL_CHARACTER.test(publicUrl)) out.push('PUBLIC_BASE_URL must not contain control characters');
  for (const name of [
    'MIDTRANS_API_BASE_URL',
    'MIDTRANS_APP_BASE_URL',
    'MIDTRANS_SNAP_BI_BASE_URL',
    'ERP_NOTIFY_URL',
  ] as const) {
    const v = env[name];
    const p = v ? outboundUrlProblem(v, production, name === 'ERP_NOTIFY_URL' ? erpAllowed : undefined) : undefined;
    if (p) out.push(`${name} ${p}`);
  }
  return out;
}

/** DATABASE_URL's TLS parameters (postgres-url.ts), and its sslrootcert a readable file. The URL is not echoed. */
function databaseUrlProblems(url: string): string[] {
  const target = postgresTarget(url);
  if (typeof target === 'string') return [`DATABASE_URL ${target}`];
  const file = target.tls.rootCert;
  if (file === undefined) return [];
  try {
    if (!fs.statSync(file).isFile()) return [`DATABASE_URL sslrootcert: ${file} is not a regular file`];
    fs.accessSync(file, fs.constants.R_OK);
  } catch (err) {
    return [`DATABASE_URL sslrootcert: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`];
  }
  return [];
}

/**
 * A key variable holds the PEM text itself or the path of a file holding it (relative to `cwd`).
 * Whether the PEM parses is `pemKeyProblem`'s (runtime config and check-config). Never echoes a value.
 */
export function pemOrFile(name: string, v: string | undefined, cwd: string, problems: string[]): string | undefined {
  if (v === undefined || v.trimStart().startsWith('-----BEGIN')) return v;
  const file = path.resolve(cwd, v);
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile() || stat.size > 16_384) {
      problems.push(`${name}: ${v} is not a PEM file (not a regular file of at most 16 KiB)`);
      return undefined;
    }
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    problems.push(
      `${name} must be a PEM key or the path of a file holding one: cannot read ${v} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
    return undefined;
  }
}

function listOf(v: string | undefined): string[] {
  return (v ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x.length > 0);
}

/** The ERP's allowed private networks, undefined when none are configured. */
export function erpAllowedNetworks(c: Config): AllowedNetworks | undefined {
  return c.erp.allowPrivateNetworks.length > 0 ? new AllowedNetworks(c.erp.allowPrivateNetworks) : undefined;
}

/** What the ERP deliveries refuse at connect time: private addresses in production, except the allowed networks. */
export function erpPrivatePolicy(c: Config): PrivatePolicy {
  return c.isProduction ? (erpAllowedNetworks(c) ?? true) : false;
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * TRUST_PROXY: a hop count (1–10), or a comma-separated list of proxy addresses / CIDR ranges /
 * `loopback`, `linklocal`, `uniquelocal`. `true` (trust anyone's X-Forwarded-For) is refused: it
 * would let every client choose the address its failed logins are counted under. A string result
 * is the problem.
 */
function trustProxyOf(v: string | undefined): string[] | number | string | undefined {
  if (v === undefined) return undefined;
  if (/^[0-9]{1,2}$/.test(v)) {
    const n = Number(v);
    return n >= 1 && n <= 10 ? n : 'TRUST_PROXY as a hop count must be 1-10';
  }
  const items = v
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x.length > 0);
  const valid = (x: string) => {
    if (PROXY_NAMES.has(x)) return true;
    const [addr = '', bits, ...rest] = x.split('/');
    const kind = isIP(addr);
    if (kind === 0 || rest.length > 0) return false;
    return bits === undefined || (/^[0-9]{1,3}$/.test(bits) && Number(bits) <= (kind === 4 ? 32 : 128));
  };
  if (items.length === 0 || !items.every(valid))
    return 'TRUST_PROXY must list proxy addresses or CIDR ranges (or loopback, linklocal, uniquelocal), comma-separated, or be a hop count 1-10';
  return items;
}

/** Where each secret variable's value lives in the configuration: a new secret variable does not compile until it is mapped. */
const SECRET_VALUES: Record<SecretVariable, (c: Config) => (string | undefined)[]> = {
  MIDTRANS_SERVER_KEY: (c) => [c.gateway.serverKey],
  MIDTRANS_CLIENT_KEY: (c) => [c.gateway.clientKey],
  ERP_WEBHOOK_SECRET: (c) => [c.erp.webhookSecret],
  API_KEYS: (c) => c.apiKeys,
  log_pass: (c) => [c.operator.pass],
  LOG_PASS: (c) => [c.operator.pass],
  DATABASE_URL: (c) => (c.database.kind === 'postgres' ? [c.database.url, databasePassword(c.database.url)] : []),
  METRICS_TOKEN: (c) => [c.metricsToken],
  // MIDTRANS_SNAP_BI_PRIVATE_KEY takes a file path itself (no `_FILE` form), so its value is taught to the scrubber here.
  MIDTRANS_SNAP_BI_CLIENT_SECRET: (c) => [c.gateway.snapBi.clientSecret, c.gateway.snapBi.privateKey],
};

function databasePassword(url: string): string | undefined {
  try {
    const p = new URL(url).password;
    return p === '' ? undefined : decodeURIComponent(p);
  } catch {
    return undefined;
  }
}

/** The values of every secret variable (`SECRET_VARIABLES`), for the log scrubber; a generated operator password is added by whoever generated it. */
export function configSecretValues(c: Config): (string | undefined)[] {
  return Object.values(SECRET_VALUES).flatMap((values) => values(c));
}

/** In production every insecure default, and every weak secret, is a refusal to start. */
function productionProblems(c: Config): string[] {
  const out: string[] = [];
  if (!c.operator.user || !c.operator.pass) out.push('log_user and log_pass are required in production');
  if (c.apiKeys.length === 0) out.push('API_KEYS is required in production');
  if (c.gateway.mode === 'simulator') out.push('MIDTRANS_MODE=simulator is not allowed in production');
  if (c.exposeDevApi) out.push('LOG_EXPOSE_API must be off in production');
  // The outbound URLs are judged by urlProblems, under the address policy.
  if (!c.publicBaseUrl.startsWith('https://')) out.push('PUBLIC_BASE_URL must use https in production');
  if (!c.configEncryption.key)
    out.push('CONFIG_ENCRYPTION_KEY is required in production (32 bytes, e.g. `openssl rand -hex 32`)');
  out.push(...weakSecretProblems(c));
  return out;
}
