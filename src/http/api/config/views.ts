/** The runtime configuration as operators see it: secrets masked, unset URLs as null, facts about this instance. */
import { Type, type Static } from 'typebox';
import type { Deps } from '../../../types.js';
import { RuntimeConfigSchema } from '../../../model/runtime-config.js';
import { SECRET_FIELDS, SNAP_BI_SECRET_FIELDS } from '../../../platform/secrets.js';
import { mask, type RuntimeConfigState } from '../../../domain/runtime-config.js';
import { apiTimeOrNull } from '../../../platform/time.js';
import { VERSION } from '../../../platform/version.js';

const S = RuntimeConfigSchema.properties;
const Masked = Type.Union([Type.String({ maxLength: 16 }), Type.Null()], {
  description: 'Write-only secret: `****` + last 4 characters, or null when unset',
});
const OrNull = Type.Union([Type.String(), Type.Null()]);

const SnapBiView = Type.Evaluate(
  Type.Script(
    { B: S.gateway.properties.snap_bi, K: Type.Enum(SNAP_BI_SECRET_FIELDS), M: Masked },
    'Omit<B, K> & { [F in K]: M }',
  ),
);

export const ConfigDocumentSchema = Type.Object({
  gateway: Type.Evaluate(
    Type.Script(
      { G: S.gateway, K: Type.Enum(SECRET_FIELDS.gateway), M: Masked, B: SnapBiView },
      'Omit<G, K | "snap_bi"> & { [F in K]: M } & { snap_bi: B }',
    ),
  ),
  erp: Type.Evaluate(
    Type.Script(
      { E: S.erp, K: Type.Enum(SECRET_FIELDS.erp), M: Masked, N: OrNull },
      'Omit<E, K | "notify_url"> & { notify_url: N } & { [F in K]: M }',
    ),
  ),
  links: S.links,
  alerts: Type.Evaluate(
    Type.Script(
      { A: S.alerts, K: Type.Enum(SECRET_FIELDS.alerts), M: Masked, N: OrNull },
      'Omit<A, K | "url"> & { url: N } & { [F in K]: M }',
    ),
  ),
  reconcile: S.reconcile,
  retention: S.retention,
  info: Type.Object({
    version: Type.String(),
    database: Type.String(),
    dev_endpoints: Type.Boolean(),
    production: Type.Boolean(),
    config_version: Type.Integer(),
    updated_at: OrNull,
    updated_by: OrNull,
  }),
});
export type ConfigDocument = Static<typeof ConfigDocumentSchema>;

/** The document of a production instance on PostgreSQL: the example the reference shows. */
export const CONFIG_EXAMPLE: ConfigDocument = {
  gateway: {
    mode: 'sandbox',
    server_key: '****8f2a',
    client_key: '****c91d',
    api_base_url: 'https://api.sandbox.midtrans.com',
    app_base_url: 'https://app.sandbox.midtrans.com',
    confirm_notifications: true,
    snap_bi: {
      client_id: 'a1b2c3d4-snap',
      client_secret: '****9xQe',
      partner_id: 'G123456789',
      channel_id: '12345',
      private_key: '****---\n',
      public_key: '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqh…\n-----END PUBLIC KEY-----\n',
      methods: ['bank_transfer', 'qris'],
    },
  },
  erp: {
    notify_url: 'https://erp.example.com/paylink/events',
    webhook_secret: '****Qx4=',
    timeout_ms: 10000,
    retry_for_hours: 72,
  },
  links: { default_expiry_minutes: 1440, enabled_payments: [] },
  alerts: {
    url: 'https://hooks.slack.com/services/T000/B000/XXXX',
    secret: null,
    format: 'slack',
    stuck_pending_after_minutes: 60,
    erp_failing_after_minutes: 15,
  },
  reconcile: { interval_s: 60, pending_after_minutes: 30 },
  retention: { days: 30 },
  info: {
    version: VERSION,
    database: 'postgres',
    dev_endpoints: false,
    production: true,
    config_version: 4,
    updated_at: '2026-11-22T09:00:00+07:00',
    updated_by: 'operator',
  },
};

/** The secret `fields` of a section, masked. */
function masked<T extends Partial<Record<K, string>>, K extends string>(
  section: T,
  fields: readonly K[],
): Record<K, string | null> {
  return Object.fromEntries(fields.map((f) => [f, mask(section[f])])) as Record<K, string | null>;
}

export function configView(c: RuntimeConfigState, services: Deps<'config' | 'version'>): ConfigDocument {
  const s = c.effective;
  return {
    gateway: {
      ...s.gateway,
      ...masked(s.gateway, SECRET_FIELDS.gateway),
      snap_bi: { ...s.gateway.snap_bi, ...masked(s.gateway.snap_bi, SNAP_BI_SECRET_FIELDS) },
    },
    erp: { ...s.erp, notify_url: s.erp.notify_url ?? null, ...masked(s.erp, SECRET_FIELDS.erp) },
    links: s.links,
    alerts: { ...s.alerts, url: s.alerts.url ?? null, ...masked(s.alerts, SECRET_FIELDS.alerts) },
    reconcile: s.reconcile,
    retention: s.retention,
    info: {
      version: services.version,
      database: c.database,
      dev_endpoints: services.config.exposeDevApi,
      production: services.config.isProduction,
      config_version: c.version,
      updated_at: apiTimeOrNull(c.updatedAt),
      updated_by: c.updatedBy,
    },
  };
}
