import { SIMULATOR_DEV_SERVER_KEY, type Config } from './env.js';
import {
  DEFAULT_PARTNER_SERVICE_ID,
  type GatewayMode,
  type RuntimeConfig,
  type SnapBiConfig,
} from '../model/runtime-config.js';
import type { Store } from '../storage/contract.js';
import { processSecretBox, type SecretBox } from '../platform/secret-box.js';
import { SECRET_FIELDS, SNAP_BI_SECRET_FIELDS } from '../platform/secrets.js';
import { DEFAULT_ACCOUNT } from '../model/account.js';

/** The values of the secret fields (`SECRET_FIELDS`, secrets.ts), for the log scrubber. */
export function secretValues(s: RuntimeConfig): (string | undefined)[] {
  return [
    ...SECRET_FIELDS.gateway.map((f) => s.gateway[f]),
    ...SNAP_BI_SECRET_FIELDS.map((f) => s.gateway.snap_bi[f]),
    ...SECRET_FIELDS.erp.map((f) => s.erp[f]),
    ...SECRET_FIELDS.alerts.map((f) => s.alerts[f]),
  ];
}

export function isSecretField(section: string, field: string): boolean {
  return (
    (section === 'gateway' && SECRET_FIELDS.gateway.some((f) => f === field)) ||
    (section === 'erp' && SECRET_FIELDS.erp.some((f) => f === field)) ||
    (section === 'alerts' && SECRET_FIELDS.alerts.some((f) => f === field))
  );
}

export const GATEWAY_HOSTS: Record<Exclude<GatewayMode, 'simulator'>, { api: string; app: string }> = {
  sandbox: { api: 'https://api.sandbox.midtrans.com', app: 'https://app.sandbox.midtrans.com' },
  production: { api: 'https://api.midtrans.com', app: 'https://app.midtrans.com' },
};

/** Defaults from the environment. `simulatorBaseUrl` is where the embedded simulator listens, in simulator mode. */
export function defaultRuntimeConfig(config: Config, simulatorBaseUrl?: string): RuntimeConfig {
  const mode = config.gateway.mode;
  const hosts =
    mode === 'simulator'
      ? {
          api: simulatorBaseUrl ?? `http://127.0.0.1:${config.simulatorPort}`,
          app: simulatorBaseUrl ?? `http://127.0.0.1:${config.simulatorPort}`,
        }
      : GATEWAY_HOSTS[mode];
  return {
    gateway: {
      mode,
      server_key: config.gateway.serverKey ?? (mode === 'simulator' ? SIMULATOR_DEV_SERVER_KEY : undefined),
      client_key: config.gateway.clientKey,
      api_base_url: config.gateway.apiBaseUrl ?? hosts.api,
      app_base_url: config.gateway.appBaseUrl ?? hosts.app,
      confirm_notifications: config.gateway.confirmNotifications,
      snap_bi: snapBiDefaults(config),
    },
    erp: {
      notify_url: config.erp.notifyUrl,
      webhook_secret: config.erp.webhookSecret,
      timeout_ms: 10_000,
      retry_for_hours: 72,
    },
    links: { default_expiry_minutes: 24 * 60, enabled_payments: [] },
    alerts: { format: 'json', stuck_pending_after_minutes: 60, erp_failing_after_minutes: 15 },
    reconcile: { interval_s: 300, pending_after_minutes: 60 },
    retention: { days: 30 },
  };
}

function snapBiDefaults(config: Config): SnapBiConfig {
  const e = config.gateway.snapBi;
  const doc: SnapBiConfig = { methods: [], partner_service_id: DEFAULT_PARTNER_SERVICE_ID };
  const fields = {
    client_id: e.clientId,
    client_secret: e.clientSecret,
    partner_id: e.partnerId,
    channel_id: e.channelId,
    private_key: e.privateKey,
    public_key: e.publicKey,
    base_url: e.baseUrl,
  };
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) Object.assign(doc, { [k]: v });
  return doc;
}

/** Stored overrides: any subset of each section. Validated by the `/api/config` route before saving. */
export type RuntimeConfigOverrides = {
  [S in Exclude<keyof RuntimeConfig, 'gateway'>]?: Partial<RuntimeConfig[S]>;
} & { gateway?: Partial<Omit<RuntimeConfig['gateway'], 'snap_bi'>> & { snap_bi?: Partial<SnapBiConfig> } };

/**
 * Each section merges field by field; an override replaces the default (arrays included).
 * `gateway.snap_bi` merges field by field too, one level down.
 */
export function applyOverrides(base: RuntimeConfig, o: RuntimeConfigOverrides): RuntimeConfig {
  return {
    gateway: { ...base.gateway, ...o.gateway, snap_bi: { ...base.gateway.snap_bi, ...o.gateway?.snap_bi } },
    erp: { ...base.erp, ...o.erp },
    links: { ...base.links, ...o.links },
    alerts: { ...base.alerts, ...o.alerts },
    reconcile: { ...base.reconcile, ...o.reconcile },
    retention: { ...base.retention, ...o.retention },
  };
}

function asOverrides(doc: Record<string, unknown>): RuntimeConfigOverrides {
  const out: RuntimeConfigOverrides = {};
  for (const section of ['gateway', 'erp', 'links', 'alerts', 'reconcile', 'retention'] as const) {
    const v = doc[section];
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) Object.assign(out, { [section]: v });
  }
  return out;
}

/**
 * Whether notifications must be confirmed with the status API: always outside simulator mode,
 * whatever a stored override says (an override written before this rule cannot weaken it).
 */
export function mustConfirmNotifications(s: RuntimeConfig): boolean {
  return s.gateway.confirm_notifications || s.gateway.mode !== 'simulator';
}

export interface RuntimeConfigService {
  /** The effective document; cached for at most `cacheMs` so every instance sees a change within that time. */
  current(): Promise<RuntimeConfig>;
  /** The stored overrides (secrets decrypted) and their version (0 = none). */
  overrides(): Promise<{ document: RuntimeConfigOverrides; version: number }>;
  /** Persists new overrides (secrets encrypted) if nobody else changed them since `expectedVersion`; false on a lost race. */
  save(overrides: RuntimeConfigOverrides, expectedVersion: number, updatedBy: string | null): Promise<boolean>;
  /**
   * Start-up: reads every stored secret (a wrong key is a ConfigKeyError here, not later) and
   * re-encrypts the ones stored in plain text or under a previous key. True when it rewrote them.
   */
  reencrypt(): Promise<boolean>;
  defaults(): RuntimeConfig;
  /** Which account's document this is. */
  readonly account: string;
  /**
   * The service of `account`'s own document (each built once and kept). Its defaults are the
   * environment's without the environment's credentials and ERP endpoint, which are `default`'s.
   */
  forAccount(account: string): RuntimeConfigService;
}

/** Another account's defaults: the environment's settings, but none of `default`'s keys, MID or ERP endpoint. */
export function accountDefaults(base: RuntimeConfig): RuntimeConfig {
  const { server_key: _s, client_key: _c, merchant_id: _m, ...gateway } = base.gateway;
  const { notify_url: _u, webhook_secret: _w, ...erp } = base.erp;
  const { base_url, methods, partner_service_id } = base.gateway.snap_bi;
  const { url: _a, secret: _as, ...alerts } = base.alerts;
  const snap_bi = { methods, partner_service_id, ...(base_url ? { base_url } : {}) };
  return { ...base, gateway: { ...gateway, snap_bi }, erp, alerts };
}

type Sealing = (v: string) => string;

/** A copy of the stored document with each secret field passed through `f` (encrypt or decrypt). */
function mapSecrets(doc: Record<string, unknown>, f: Sealing): Record<string, unknown> {
  const out: Record<string, unknown> = { ...doc };
  for (const [section, fields] of Object.entries(SECRET_FIELDS)) {
    const v = doc[section];
    if (v === null || typeof v !== 'object' || Array.isArray(v)) continue;
    const copy: Record<string, unknown> = { ...v };
    for (const field of fields) {
      const secret = copy[field];
      if (typeof secret === 'string') copy[field] = f(secret);
    }
    out[section] = copy;
  }
  const gateway = out.gateway;
  if (gateway !== null && typeof gateway === 'object' && !Array.isArray(gateway)) {
    const snapBi: unknown = Reflect.get(gateway, 'snap_bi');
    if (snapBi !== null && typeof snapBi === 'object' && !Array.isArray(snapBi)) {
      const copy: Record<string, unknown> = { ...snapBi };
      for (const field of SNAP_BI_SECRET_FIELDS) {
        const secret = copy[field];
        if (typeof secret === 'string') copy[field] = f(secret);
      }
      out.gateway = { ...gateway, snap_bi: copy };
    }
  }
  return out;
}

/**
 * `onLoad` sees every document read from the database — how each instance learns secrets that
 * another instance stored (the log scrubber must know them before they could be logged). `box`
 * encrypts the secret fields at rest (AES-256-GCM, see secret-box.ts); `startService` passes the
 * configured key's, an app built in process without one seals with a key for the whole process.
 */
export function createRuntimeConfigService(
  store: Store,
  defaults: () => RuntimeConfig,
  cacheMs = 1_000,
  onLoad?: (s: RuntimeConfig) => void,
  box: SecretBox = processSecretBox(),
): RuntimeConfigService {
  const accounts = new Map<string, RuntimeConfigService>();
  const forAccount = (account: string): RuntimeConfigService => {
    if (account === DEFAULT_ACCOUNT) return root;
    let s = accounts.get(account);
    if (!s) {
      s = accountService(
        store.forAccount(account),
        () => accountDefaults(defaults()),
        cacheMs,
        onLoad,
        box,
        forAccount,
      );
      accounts.set(account, s);
    }
    return s;
  };
  const root = accountService(store, defaults, cacheMs, onLoad, box, forAccount);
  return root;
}

function accountService(
  store: Store,
  defaults: () => RuntimeConfig,
  cacheMs: number,
  onLoad: ((s: RuntimeConfig) => void) | undefined,
  box: SecretBox,
  forAccount: (account: string) => RuntimeConfigService,
): RuntimeConfigService {
  let cached: { at: number; value: RuntimeConfig } | undefined;
  const overrides = async () => {
    const row = await store.config.get();
    return {
      document: asOverrides(mapSecrets(row?.document ?? {}, (v) => box.decrypt(v))),
      version: row?.version ?? 0,
    };
  };
  const save = async (doc: RuntimeConfigOverrides, expectedVersion: number, updatedBy: string | null) => {
    const saved = await store.config.put(
      mapSecrets({ ...doc }, (v) => box.encrypt(v)),
      expectedVersion,
      updatedBy,
    );
    cached = undefined;
    return saved !== undefined;
  };
  return {
    account: store.account,
    forAccount,
    defaults,
    overrides,
    save,
    async current() {
      const t = Date.now();
      if (cached && t - cached.at < cacheMs) return cached.value;
      const { document } = await overrides();
      const value = applyOverrides(defaults(), document);
      onLoad?.(value);
      cached = { at: t, value };
      return value;
    },
    async reencrypt() {
      const row = await store.config.get();
      if (!row) return false;
      let stale = false;
      mapSecrets(row.document, (v) => {
        if (!box.isCurrent(v)) stale = true;
        return v;
      });
      const { document, version } = await overrides();
      if (!stale) return false;
      // Another instance may do the same at the same moment: losing that race is fine.
      return save(document, version, row.updatedBy);
    },
  };
}
