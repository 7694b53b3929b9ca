/**
 * Secrets every layer handles: the runtime-configuration fields that hold one (named once here and
 * used by the runtime config service, the `/api/config` answer and the log redaction) and the constant-time
 * comparison of two secrets. A leaf: imports nothing of the service.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The secret fields of the runtime configuration, by section: shown masked in answers, left
 * unchanged when a masked value is sent back, redacted from logs by name, and taught to the log
 * scrubber by value whenever the runtime config is read.
 */
export const SECRET_FIELDS = {
  gateway: ['server_key', 'client_key'],
  erp: ['webhook_secret'],
  alerts: ['secret'],
} as const;

/** The secret fields of `gateway.snap_bi`, treated like `SECRET_FIELDS` one level down. */
export const SNAP_BI_SECRET_FIELDS = ['client_secret', 'private_key'] as const;

/**
 * The environment variables that hold a secret: each may be given instead as `NAME_FILE`, the
 * path of a file holding the value (as container and Kubernetes secrets are mounted), and the log
 * scrubber is taught each one's value (`configSecretValues`, env.ts, maps every name).
 */
export const SECRET_VARIABLES = [
  'MIDTRANS_SERVER_KEY',
  'MIDTRANS_CLIENT_KEY',
  'ERP_WEBHOOK_SECRET',
  'API_KEYS',
  'log_pass',
  'LOG_PASS',
  'DATABASE_URL',
  'METRICS_TOKEN',
  'MIDTRANS_SNAP_BI_CLIENT_SECRET',
] as const;
export type SecretVariable = (typeof SECRET_VARIABLES)[number];

/** Every secret field name, whatever its section. */
export const SECRET_FIELD_NAMES: readonly string[] = [...Object.values(SECRET_FIELDS).flat(), ...SNAP_BI_SECRET_FIELDS];

/** Constant-time equality of two secrets of any length: both sides are digested first, so lengths never leak or throw. */
export function secretEquals(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}
