import { isObject } from './lib/validate.js';

export type CoreHttpStatus = 'mirror' | 'body';

export interface Faults {
  latency_ms: number;
  error_rate: number;
  status: number;
  timeout_rate: number;
  duplicate_rate: number;
  reorder: boolean;
  drop_rate: number;
  core_http_status: CoreHttpStatus;
}

export function defaultFaults(coreHttpStatus: CoreHttpStatus = 'mirror'): Faults {
  return {
    latency_ms: 0,
    error_rate: 0,
    status: 500,
    timeout_rate: 0,
    duplicate_rate: 0,
    reorder: false,
    drop_rate: 0,
    core_http_status: coreHttpStatus,
  };
}

const RATES = ['error_rate', 'timeout_rate', 'duplicate_rate', 'drop_rate'] as const;
const KNOWN = new Set<string>(['latency_ms', 'status', 'reorder', 'core_http_status', ...RATES]);

function checkInt(v: unknown, min: number, max: number): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? v : undefined;
}

/** PUT replaces the whole fault document: fields left out fall back to their defaults. */
export function parseFaults(body: unknown, base: Faults): { faults: Faults } | { errors: string[] } {
  if (!isObject(body)) return { errors: ['body must be a JSON object'] };
  const errors: string[] = [];
  const out: Faults = { ...base };
  for (const k of Object.keys(body)) if (!KNOWN.has(k)) errors.push(`unknown field '${k}'`);
  if (body.latency_ms !== undefined) {
    const v = checkInt(body.latency_ms, 0, 60_000);
    if (v === undefined) errors.push('latency_ms must be an integer between 0 and 60000');
    else out.latency_ms = v;
  }
  if (body.status !== undefined) {
    const v = checkInt(body.status, 400, 599);
    if (v === undefined) errors.push('status must be an integer HTTP status between 400 and 599');
    else out.status = v;
  }
  for (const k of RATES) {
    const v = body[k];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !(v >= 0 && v <= 1)) errors.push(`${k} must be a number between 0 and 1`);
    else out[k] = v;
  }
  if (body.reorder !== undefined) {
    if (typeof body.reorder !== 'boolean') errors.push('reorder must be a boolean');
    else out.reorder = body.reorder;
  }
  if (body.core_http_status !== undefined) {
    const v = body.core_http_status;
    if (v !== 'mirror' && v !== 'body') errors.push("core_http_status must be 'mirror' or 'body'");
    else out.core_http_status = v;
  }
  return errors.length > 0 ? { errors } : { faults: out };
}
