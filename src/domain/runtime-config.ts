/**
 * Changing the runtime configuration: the stored document of overrides over the environment's
 * values, shared by every instance through the database. The patch's shape is checked at the edge
 * with `RuntimeConfigPatchSchema`; the rules across fields, and where the server key may go, are here.
 */
import { Type, type Static, type TObject } from 'typebox';
import type { Deps } from '../types.js';
import { erpAllowedNetworks, serverKeyProblem } from '../config/env.js';
import {
  GATEWAY_HOSTS,
  applyOverrides,
  isSecretField,
  secretValues,
  type RuntimeConfigOverrides,
} from '../config/runtime.js';
import { RuntimeConfigSchema, type RuntimeConfig } from '../model/runtime-config.js';
import { AppError, type FieldError } from '../platform/errors.js';
import { outboundUrlProblem, type AllowedNetworks } from '../platform/url-policy.js';
import { enabledPaymentsProblem } from '../gateway/payment-methods.js';
import { registerLogSecrets } from '../platform/logging/logger.js';
import { SNAP_BI_SECRET_FIELDS } from '../platform/secrets.js';
import { privateKeyProblem, publicKeyProblem } from '../platform/rsa-keys.js';
import { actorName, audit, type Actor } from './audit.js';
import { requireRole } from './operators/access.js';
import { DEFAULT_ACCOUNT } from '../model/account.js';

const S = RuntimeConfigSchema.properties;
/** A section of the patch: any of its fields; `null` removes an override, so the field falls back to the environment's value. */
function patchOf<T extends TObject>(section: T) {
  const patch = Type.Script({ S: section }, '{ [F in keyof S]?: S[F] | null }', { additionalProperties: false });
  // The mapping rebuilds arrays without their bounds (maxItems, uniqueItems): each field keeps its own schema.
  const fields: unknown = Reflect.get(patch, 'properties');
  if (fields === null || typeof fields !== 'object') throw new Error('a patch section must be an object schema');
  for (const [field, schema] of Object.entries(section.properties))
    Object.assign(fields, { [field]: Type.Optional(Type.Union([schema, Type.Null()])) });
  return Type.Optional(patch);
}

/** `gateway.snap_bi` in a patch: any of its fields, each `null` to remove its override; `null` for all of it. */
function gatewayPatch() {
  const gateway = patchOf(S.gateway);
  const fields: unknown = Reflect.get(gateway, 'properties');
  if (fields === null || typeof fields !== 'object') throw new Error('a patch section must be an object schema');
  Object.assign(fields, { snap_bi: Type.Optional(Type.Union([patchOf(S.gateway.properties.snap_bi), Type.Null()])) });
  return gateway;
}

export const RuntimeConfigPatchSchema = Type.Object(
  {
    gateway: gatewayPatch(),
    erp: patchOf(S.erp),
    links: patchOf(S.links),
    alerts: patchOf(S.alerts),
    reconcile: patchOf(S.reconcile),
    retention: patchOf(S.retention),
  },
  { additionalProperties: false },
);
export type RuntimeConfigPatch = Static<typeof RuntimeConfigPatchSchema>;

/** `****` + last 4; short secrets show nothing, since 4 of 8 characters is half the secret. */
export function mask(secret: string | undefined): string | null {
  if (secret === undefined || secret === '') return null;
  return secret.length >= 12 ? `****${secret.slice(-4)}` : '****';
}

/** A secret as `mask` shows it: sent back in a patch, it means "unchanged". */
const isMasked = (v: unknown) => typeof v === 'string' && v.startsWith('****');

type Section = keyof RuntimeConfigOverrides;
const SECTIONS: Section[] = ['gateway', 'erp', 'links', 'alerts', 'reconcile', 'retention'];

/**
 * The stored overrides with `patch` merged in: `null` deletes a field's override, a masked secret
 * sent back is ignored. Also returns the changed field names (for the audit line; never values).
 */
export function mergePatch(
  current: RuntimeConfigOverrides,
  patch: RuntimeConfigPatch,
): { next: RuntimeConfigOverrides; changed: string[] } {
  const next: Record<string, Record<string, unknown>> = {};
  for (const section of SECTIONS) next[section] = { ...(current[section] ?? {}) };
  const changed: string[] = [];
  for (const section of SECTIONS) {
    const fields: Record<string, unknown> = patch[section] ?? {};
    const target = next[section] ?? {};
    for (const [field, value] of Object.entries(fields)) {
      const name = `${section}.${field}`;
      if (section === 'gateway' && field === 'snap_bi' && value !== null) {
        mergeSnapBi(target, value, changed);
        continue;
      }
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
    for (const [field, host] of [
      ['api_base_url', 'api'],
      ['app_base_url', 'app'],
    ] as const) {
      if (patch.gateway?.[field] !== undefined) continue;
      const before = gw[field];
      if (mode === null || mode === 'simulator') delete gw[field];
      else gw[field] = GATEWAY_HOSTS[mode][host];
      if (before !== gw[field]) changed.push(`gateway.${field}`);
    }
  }
  const out: RuntimeConfigOverrides = {};
  for (const section of SECTIONS)
    if (Object.keys(next[section] ?? {}).length > 0) Object.assign(out, { [section]: next[section] });
  return { next: out, changed: [...new Set(changed)] };
}

/** `gateway.snap_bi` merged field by field, as a section is (`null` removes an override, a masked secret is unchanged). */
function mergeSnapBi(gateway: Record<string, unknown>, patch: unknown, changed: string[]): void {
  const before: unknown = gateway.snap_bi;
  const target: Record<string, unknown> =
    before !== null && typeof before === 'object' && !Array.isArray(before) ? { ...before } : {};
  const fields = patch !== null && typeof patch === 'object' ? Object.entries(patch) : [];
  for (const [field, value] of fields) {
    if (SNAP_BI_SECRET_FIELDS.some((f) => f === field) && isMasked(value)) continue;
    const name = `gateway.snap_bi.${field}`;
    if (value === null) {
      if (field in target) changed.push(name);
      delete target[field];
    } else if (JSON.stringify(target[field]) !== JSON.stringify(value)) {
      target[field] = value;
      changed.push(name);
    }
  }
  if (Object.keys(target).length > 0) gateway.snap_bi = target;
  else delete gateway.snap_bi;
}

/** The gateway fields that decide where the server key is sent. */
const KEY_DESTINATION = ['mode', 'api_base_url', 'app_base_url'] as const;

/**
 * A change of where the server key goes (the mode, either gateway host) needs the key itself in
 * the same patch, unmasked: otherwise anyone holding operator credentials (or a forged console
 * form) could point the service at a host of their own and receive the stored key with the next
 * gateway call. Sending the key proves it is known already, or chooses a new one for the new host.
 * Undefined when the patch may be saved.
 */
export function serverKeyReentryProblem(
  before: RuntimeConfig,
  after: RuntimeConfig,
  patch: RuntimeConfigPatch,
): FieldError | undefined {
  const moved = KEY_DESTINATION.filter((f) => before.gateway[f] !== after.gateway[f]);
  if (moved.length === 0) return undefined;
  const key = patch.gateway?.server_key;
  if (typeof key === 'string' && !isMasked(key)) return undefined;
  return {
    path: 'gateway.server_key',
    message: `must be sent again, unmasked, with a change of ${moved.map((f) => `gateway.${f}`).join(', ')}: the server key goes to the configured gateway host`,
  };
}

/** Rules across fields, checked on the document that would be in effect. */
export function effectiveProblems(
  s: RuntimeConfig,
  o: { production: boolean; simulatorAvailable: boolean; erpAllowed?: AllowedNetworks },
): FieldError[] {
  const out: FieldError[] = [];
  const url = (path: string, v: string | undefined, allowed?: AllowedNetworks) => {
    const p = v === undefined ? undefined : outboundUrlProblem(v, o.production, allowed);
    if (p) out.push({ path, message: p });
  };
  url('erp.notify_url', s.erp.notify_url, o.erpAllowed);
  url('alerts.url', s.alerts.url);
  url('gateway.api_base_url', s.gateway.api_base_url);
  url('gateway.app_base_url', s.gateway.app_base_url);
  const methods = enabledPaymentsProblem(s.links.enabled_payments, 'links.enabled_payments');
  if (methods) out.push(methods);
  if (s.gateway.mode === 'simulator' && (o.production || !o.simulatorAvailable)) {
    out.push({
      path: 'gateway.mode',
      message: o.production
        ? 'simulator mode is not allowed in production'
        : 'simulator mode needs the service started in simulator mode',
    });
  }
  if (s.gateway.mode !== 'simulator' && !s.gateway.confirm_notifications) {
    out.push({
      path: 'gateway.confirm_notifications',
      message: `cannot be turned off in ${s.gateway.mode} mode: the gateway's signature does not cover transaction_status, so only the status API can confirm what a notification reports`,
    });
  }
  const keyProblem = serverKeyProblem(s.gateway.mode, s.gateway.server_key);
  if (keyProblem) out.push({ path: 'gateway.server_key', message: keyProblem });
  url('gateway.snap_bi.base_url', s.gateway.snap_bi.base_url);
  out.push(...snapBiProblems(s.gateway.snap_bi));
  return out;
}

const SNAP_BI_REQUIRED = [
  'client_id',
  'client_secret',
  'partner_id',
  'channel_id',
  'private_key',
  'public_key',
] as const;

/** BI-SNAP's keys usable, and every credential present once a payment method goes through it. */
export function snapBiProblems(b: RuntimeConfig['gateway']['snap_bi']): FieldError[] {
  const out: FieldError[] = [];
  const privateProblem = b.private_key === undefined ? undefined : privateKeyProblem(b.private_key);
  if (privateProblem) out.push({ path: 'gateway.snap_bi.private_key', message: privateProblem });
  const publicProblem = b.public_key === undefined ? undefined : publicKeyProblem(b.public_key);
  if (publicProblem) out.push({ path: 'gateway.snap_bi.public_key', message: publicProblem });
  if (b.methods.length > 0) {
    for (const f of SNAP_BI_REQUIRED)
      if (b[f] === undefined)
        out.push({
          path: `gateway.snap_bi.${f}`,
          message: `is required while gateway.snap_bi.methods names ${b.methods.join(', ')}: those payments go through BI-SNAP`,
        });
  }
  return out;
}

/** The runtime config in effect, and the stored version its overrides come from. */
export interface RuntimeConfigState {
  effective: RuntimeConfig;
  version: number;
  updatedAt: string | null;
  updatedBy: string | null;
  /** The database kind (`sqlite`, `postgres`). */
  database: string;
}

/** The configuration in effect now. Its secrets are added to the log redaction, wherever they were set. */
export async function currentRuntimeConfig(
  services: Deps<'logger' | 'runtimeConfig' | 'store'>,
): Promise<RuntimeConfigState> {
  const effective = await services.runtimeConfig.current();
  registerLogSecrets(services.logger, secretValues(effective));
  const row = await services.store.config.get();
  return {
    effective,
    version: row?.version ?? 0,
    updatedAt: row?.updatedAt ?? null,
    updatedBy: row?.updatedBy ?? null,
    database: services.store.kind,
  };
}

/** How often a save that lost a race with another instance's is merged again and retried. */
const SAVE_ATTEMPTS = 3;

/**
 * Merges `patch` into the stored overrides and saves them, when the result is usable: 400
 * `VALIDATION_FAILED` (rules across fields), 400 `SERVER_KEY_REQUIRED` (the key's destination moves
 * without the key), 409 `CONFIG_CONFLICT` (lost the race to other saves every time). A patch that
 * changes nothing saves nothing and writes no audit line. Answers the changed field names.
 */
export async function changeRuntimeConfig(
  services: Deps<'config' | 'logger' | 'runtimeConfig'>,
  patch: RuntimeConfigPatch,
  actor: Actor,
): Promise<string[]> {
  requireRole(actor, 'admin');
  for (let attempt = 1; attempt <= SAVE_ATTEMPTS; attempt++) {
    const stored = await services.runtimeConfig.overrides();
    const { next, changed } = mergePatch(stored.document, patch);
    const effective = applyOverrides(services.runtimeConfig.defaults(), next);
    const problems = effectiveProblems(effective, {
      production: services.config.isProduction,
      simulatorAvailable: services.config.gateway.mode === 'simulator',
      erpAllowed: erpAllowedNetworks(services.config),
    });
    if (problems.length > 0)
      throw new AppError('VALIDATION_FAILED', 'The configuration would not be usable.', { errors: problems });
    const keyProblem = serverKeyReentryProblem(
      applyOverrides(services.runtimeConfig.defaults(), stored.document),
      effective,
      patch,
    );
    if (keyProblem)
      throw new AppError(
        'SERVER_KEY_REQUIRED',
        'Changing the gateway mode or host needs the server key in the same request.',
        { errors: [keyProblem] },
      );
    if (changed.length === 0) return changed;
    if (await services.runtimeConfig.save(next, stored.version, actor.kind === 'operator' ? actor.user : null)) {
      const version = stored.version + 1;
      audit(
        services,
        { actor, action: 'config_change', subject: 'runtime_config', outcome: 'saved' },
        `${actorName(actor)} changed the runtime configuration`,
        {
          fields: changed,
          config_version: version,
          ...(services.runtimeConfig.account === DEFAULT_ACCOUNT ? {} : { account: services.runtimeConfig.account }),
        },
      );
      return changed;
    }
  }
  throw new AppError('CONFIG_CONFLICT');
}
