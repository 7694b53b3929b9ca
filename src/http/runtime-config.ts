import { Type, type Static, type TObject } from 'typebox';
import { SIMULATOR_DEV_SERVER_KEY } from '../config.js';
import { GATEWAY_HOSTS, RuntimeSettingsSchema, isSecretField, type RuntimeOverrides, type RuntimeSettings } from '../settings.js';
import type { FieldError } from '../errors.js';
import { SECRET_FIELDS } from '../secrets.js';
import { outboundUrlProblem } from '../url-policy.js';
import { enabledPaymentsProblem } from '../gateway/payment-methods.js';

/** Operator GETs take no query string: a stray `?password=` is refused rather than ignored (and logged). */
export const NoQuery = Type.Object({}, { additionalProperties: false });

const S = RuntimeSettingsSchema.properties;
/** A section of the patch: any of its fields; `null` removes an override, so the field falls back to the environment's value. */
function patchOf<T extends TObject>(section: T) {
  const patch = Type.Script({ S: section }, '{ [F in keyof S]?: S[F] | null }', { additionalProperties: false });
  // The mapping rebuilds arrays without their bounds (maxItems, uniqueItems): each field keeps its own schema.
  const fields: unknown = Reflect.get(patch, 'properties');
  if (fields === null || typeof fields !== 'object') throw new Error('a patch section must be an object schema');
  for (const [field, schema] of Object.entries(section.properties)) Object.assign(fields, { [field]: Type.Optional(Type.Union([schema, Type.Null()])) });
  return Type.Optional(patch);
}

export const ConfigPatchSchema = Type.Object(
  { gateway: patchOf(S.gateway), erp: patchOf(S.erp), links: patchOf(S.links), reconcile: patchOf(S.reconcile), retention: patchOf(S.retention) },
  { additionalProperties: false },
);
export type ConfigPatch = Static<typeof ConfigPatchSchema>;

const Masked = Type.Union([Type.String({ maxLength: 16 }), Type.Null()], { description: 'Write-only secret: `****` + last 4 characters, or null when unset' });
const OrNull = Type.Union([Type.String(), Type.Null()]);
/** The answer: the effective settings with secrets masked and unset URLs as null, and facts about this instance. */
export const ConfigDocumentSchema = Type.Object({
  gateway: Type.Evaluate(Type.Script({ G: S.gateway, K: Type.Enum(SECRET_FIELDS.gateway), M: Masked }, 'Omit<G, K> & { [F in K]: M }')),
  erp: Type.Evaluate(Type.Script({ E: S.erp, K: Type.Enum(SECRET_FIELDS.erp), M: Masked, N: OrNull }, 'Omit<E, K | "notify_url"> & { notify_url: N } & { [F in K]: M }')),
  links: S.links,
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

/** `****` + last 4; short secrets show nothing, since 4 of 8 characters is half the secret. */
export function mask(secret: string | undefined): string | null {
  if (secret === undefined || secret === '') return null;
  return secret.length >= 12 ? `****${secret.slice(-4)}` : '****';
}

const isMasked = (v: unknown) => typeof v === 'string' && v.startsWith('****');

/** The secret `fields` of a section, masked. */
function masked<T extends Partial<Record<K, string>>, K extends string>(section: T, fields: readonly K[]): Record<K, string | null> {
  return Object.fromEntries(fields.map((f) => [f, mask(section[f])])) as Record<K, string | null>;
}

export function maskedDocument(s: RuntimeSettings): Omit<Static<typeof ConfigDocumentSchema>, 'info'> {
  return {
    gateway: { ...s.gateway, ...masked(s.gateway, SECRET_FIELDS.gateway) },
    erp: { ...s.erp, notify_url: s.erp.notify_url ?? null, ...masked(s.erp, SECRET_FIELDS.erp) },
    links: s.links,
    reconcile: s.reconcile,
    retention: s.retention,
  };
}

type Section = keyof RuntimeOverrides;
const SECTIONS: Section[] = ['gateway', 'erp', 'links', 'reconcile', 'retention'];

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
      if (isSecretField(section, field) && isMasked(value)) continue;
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
