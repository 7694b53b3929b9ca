import { Type, type Static } from 'typebox';
import { SIMULATOR_DEV_SERVER_KEY } from '../config.js';
import { GATEWAY_HOSTS, type RuntimeOverrides, type RuntimeSettings } from '../settings.js';
import type { FieldError } from '../errors.js';
import { outboundUrlProblem } from '../url-policy.js';
import { enabledPaymentsProblem } from '../gateway/payment-methods.js';

/** `null` removes an override, so the field falls back to the environment's value. */
const orNull = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Optional(Type.Union([t, Type.Null()]));
const Url = Type.String({ minLength: 1, maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://' });
const Secret = Type.String({ minLength: 1, maxLength: 512, pattern: '^\\S+$' });
const Mode = Type.Union([Type.Literal('simulator'), Type.Literal('sandbox'), Type.Literal('production')]);
const Int = (minimum: number, maximum: number) => Type.Integer({ minimum, maximum });

/** Operator GETs take no query string: a stray `?password=` is refused rather than ignored (and logged). */
export const NoQuery = Type.Object({}, { additionalProperties: false });

export const ConfigPatchSchema = Type.Object(
  {
    gateway: Type.Optional(
      Type.Object(
        {
          mode: orNull(Mode),
          server_key: orNull(Secret),
          client_key: orNull(Secret),
          api_base_url: orNull(Url),
          app_base_url: orNull(Url),
          confirm_notifications: orNull(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
    erp: Type.Optional(
      Type.Object(
        { notify_url: orNull(Url), webhook_secret: orNull(Secret), timeout_ms: orNull(Int(100, 120_000)), retry_for_hours: orNull(Int(1, 720)) },
        { additionalProperties: false },
      ),
    ),
    links: Type.Optional(
      Type.Object(
        {
          default_expiry_minutes: orNull(Int(5, 60 * 24 * 30)),
          enabled_payments: orNull(Type.Array(Type.String({ minLength: 1, maxLength: 40, pattern: '^[a-z0-9_]+$' }), { maxItems: 40, uniqueItems: true })),
        },
        { additionalProperties: false },
      ),
    ),
    reconcile: Type.Optional(
      Type.Object({ interval_s: orNull(Int(5, 86_400)), pending_after_minutes: orNull(Int(1, 60 * 24 * 7)) }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);
export type ConfigPatch = Static<typeof ConfigPatchSchema>;

const Masked = Type.Union([Type.String({ maxLength: 16 }), Type.Null()], { description: 'Write-only secret: `****` + last 4 characters, or null when unset' });
export const ConfigDocumentSchema = Type.Object({
  gateway: Type.Object({
    mode: Mode,
    server_key: Masked,
    client_key: Masked,
    api_base_url: Type.String(),
    app_base_url: Type.String(),
    confirm_notifications: Type.Boolean(),
  }),
  erp: Type.Object({ notify_url: Type.Union([Type.String(), Type.Null()]), webhook_secret: Masked, timeout_ms: Type.Integer(), retry_for_hours: Type.Integer() }),
  links: Type.Object({ default_expiry_minutes: Type.Integer(), enabled_payments: Type.Array(Type.String()) }),
  reconcile: Type.Object({ interval_s: Type.Integer(), pending_after_minutes: Type.Integer() }),
  info: Type.Object({
    version: Type.String(),
    database: Type.String(),
    dev_endpoints: Type.Boolean(),
    production: Type.Boolean(),
    config_version: Type.Integer(),
    updated_at: Type.Union([Type.String(), Type.Null()]),
    updated_by: Type.Union([Type.String(), Type.Null()]),
  }),
});

export const SECRET_FIELDS = new Set(['gateway.server_key', 'gateway.client_key', 'erp.webhook_secret']);

/** `****` + last 4; short secrets show nothing, since 4 of 8 characters is half the secret. */
export function mask(secret: string | undefined): string | null {
  if (secret === undefined || secret === '') return null;
  return secret.length >= 12 ? `****${secret.slice(-4)}` : '****';
}

const isMasked = (v: unknown) => typeof v === 'string' && v.startsWith('****');

export function maskedDocument(s: RuntimeSettings) {
  return {
    gateway: { ...s.gateway, server_key: mask(s.gateway.server_key), client_key: mask(s.gateway.client_key) },
    erp: { ...s.erp, notify_url: s.erp.notify_url ?? null, webhook_secret: mask(s.erp.webhook_secret) },
    links: s.links,
    reconcile: s.reconcile,
  };
}

type Section = keyof RuntimeOverrides;
const SECTIONS: Section[] = ['gateway', 'erp', 'links', 'reconcile'];

/**
 * The stored overrides with `patch` merged in: `null` deletes a field's override, a masked secret
 * sent back is ignored. Also returns the changed field names (for the audit line; never values).
 */
export function mergePatch(current: RuntimeOverrides, patch: ConfigPatch): { next: RuntimeOverrides; changed: string[] } {
  const next: Record<string, Record<string, unknown>> = {};
  for (const section of SECTIONS) next[section] = { ...(current[section] ?? {}) };
  const changed: string[] = [];
  for (const section of SECTIONS) {
    const fields: Record<string, unknown> = patch[section] ?? {};
    const target = next[section] ?? {};
    for (const [field, value] of Object.entries(fields)) {
      const name = `${section}.${field}`;
      if (SECRET_FIELDS.has(name) && isMasked(value)) continue;
      if (value === null) {
        if (field in target) changed.push(name);
        delete target[field];
      } else if (JSON.stringify(target[field]) !== JSON.stringify(value)) {
        target[field] = value;
        changed.push(name);
      }
    }
  }
  // Choosing a gateway mode without hosts means that mode's hosts (else requests keep going to the old ones).
  const mode = patch.gateway?.mode;
  const gw = next.gateway ?? {};
  if (mode !== undefined && changed.includes('gateway.mode')) {
    for (const [field, host] of [['api_base_url', 'api'], ['app_base_url', 'app']] as const) {
      if (patch.gateway?.[field] !== undefined) continue;
      const before = gw[field];
      if (mode === null || mode === 'simulator') delete gw[field];
      else gw[field] = GATEWAY_HOSTS[mode][host];
      if (before !== gw[field]) changed.push(`gateway.${field}`);
    }
  }
  const out: RuntimeOverrides = {};
  for (const section of SECTIONS) if (Object.keys(next[section] ?? {}).length > 0) Object.assign(out, { [section]: next[section] });
  return { next: out, changed: [...new Set(changed)] };
}

/** Rules across fields, checked on the document that would be in effect. */
export function effectiveProblems(s: RuntimeSettings, o: { production: boolean; simulatorAvailable: boolean }): FieldError[] {
  const out: FieldError[] = [];
  const url = (path: string, v: string | undefined) => {
    const p = v === undefined ? undefined : outboundUrlProblem(v, o.production);
    if (p) out.push({ path, message: p });
  };
  url('erp.notify_url', s.erp.notify_url);
  url('gateway.api_base_url', s.gateway.api_base_url);
  url('gateway.app_base_url', s.gateway.app_base_url);
  const methods = enabledPaymentsProblem(s.links.enabled_payments, 'links.enabled_payments');
  if (methods) out.push(methods);
  if (s.gateway.mode === 'simulator' && (o.production || !o.simulatorAvailable)) {
    out.push({ path: 'gateway.mode', message: o.production ? 'simulator mode is not allowed in production' : 'simulator mode needs the service started in simulator mode' });
  }
  if (s.gateway.mode !== 'simulator' && !s.gateway.confirm_notifications) {
    out.push({
      path: 'gateway.confirm_notifications',
      message: `cannot be turned off in ${s.gateway.mode} mode: the gateway's signature does not cover transaction_status, so only the status API can confirm what a notification reports`,
    });
  }
  if (s.gateway.mode !== 'simulator' && (!s.gateway.server_key || s.gateway.server_key === SIMULATOR_DEV_SERVER_KEY)) {
    out.push({ path: 'gateway.server_key', message: `a server key is required in ${s.gateway.mode} mode` });
  }
  return out;
}
