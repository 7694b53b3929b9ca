/** The merchant list: its rules, shared by the embedded options and `SIMULATOR_MERCHANTS`. */
import { isHttpUrl, isObject } from './lib/validate.js';
import type { MerchantSettings } from './state.js';

/** A merchant and the name a problem uses for it (`SIMULATOR_MERCHANTS[1]`, `merchants[0]`, …). */
export interface NamedMerchant {
  name: string;
  settings: MerchantSettings;
}

const KEY_RE = /^\S+$/;
/** MIDs look like `G123456789`; letters and digits keep them safe in a query string and a log line. */
const MERCHANT_ID_RE = /^[A-Za-z0-9]{1,32}$/;

function formatProblems({ name, settings: s }: NamedMerchant): string[] {
  const out: string[] = [];
  if (!KEY_RE.test(s.serverKey)) out.push(`${name}: server_key must be non-empty without whitespace`);
  if (s.clientKey !== undefined && !KEY_RE.test(s.clientKey))
    out.push(`${name}: client_key must be non-empty without whitespace`);
  if (!MERCHANT_ID_RE.test(s.merchantId))
    out.push(`${name}: merchant_id must be 1-32 letters or digits (such as G123456789), got '${s.merchantId}'`);
  if (s.notificationUrl !== undefined && !isHttpUrl(s.notificationUrl))
    out.push(`${name}: notification_url must be an http(s) URL, got '${s.notificationUrl}'`);
  return out;
}

type Field = 'serverKey' | 'clientKey' | 'merchantId';
const FIELD_NAMES: Record<Field, string> = {
  serverKey: 'server_key',
  clientKey: 'client_key',
  merchantId: 'merchant_id',
};

/** A key picks its merchant, and a MID names one: each must be one merchant's only. */
function duplicateProblems(list: readonly NamedMerchant[]): string[] {
  const out: string[] = [];
  for (const field of Object.keys(FIELD_NAMES) as Field[]) {
    const seen = new Map<string, string>();
    for (const { name, settings } of list) {
      const value = settings[field];
      if (value === undefined) continue;
      const first = seen.get(value);
      // Key values stay out of the message: they are the merchants' secrets.
      if (first !== undefined) out.push(`${name}: ${FIELD_NAMES[field]} is already used by ${first}`);
      else seen.set(value, name);
    }
  }
  return out;
}

/** Every problem of the list, each naming its entry; none means the list is usable. */
export function merchantListProblems(list: readonly NamedMerchant[]): string[] {
  return [...list.flatMap(formatProblems), ...duplicateProblems(list)];
}

const ENTRY_FIELDS = new Set(['server_key', 'client_key', 'merchant_id', 'notification_url']);

function entrySettings(raw: unknown, name: string, errors: string[]): MerchantSettings | undefined {
  if (!isObject(raw)) {
    errors.push(`${name} must be an object {server_key, client_key?, merchant_id, notification_url?}`);
    return undefined;
  }
  for (const k of Object.keys(raw)) if (!ENTRY_FIELDS.has(k)) errors.push(`${name}: unknown field '${k}'`);
  const text = (k: string, required: boolean): string | undefined => {
    const v = raw[k];
    if (typeof v === 'string') return v;
    if (v !== undefined || required)
      errors.push(`${name}: ${k} ${v === undefined ? 'is required' : 'must be a string'}`);
    return undefined;
  };
  const serverKey = text('server_key', true);
  const clientKey = text('client_key', false);
  const merchantId = text('merchant_id', true);
  const notificationUrl = text('notification_url', false);
  if (serverKey === undefined || merchantId === undefined) return undefined;
  const out: MerchantSettings = { serverKey, merchantId };
  if (clientKey !== undefined) out.clientKey = clientKey;
  if (notificationUrl !== undefined) out.notificationUrl = notificationUrl;
  return out;
}

/**
 * `SIMULATOR_MERCHANTS`: a JSON array of `{server_key, client_key?, merchant_id, notification_url?}`,
 * the merchants beside the default one. Only the shape is checked here; the list with the default
 * merchant goes through `merchantListProblems`.
 */
export function parseMerchantsJson(
  text: string,
  variable: string,
): { merchants: NamedMerchant[] } | { errors: string[] } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { errors: [`${variable} is not valid JSON (${err instanceof Error ? err.message : String(err)})`] };
  }
  if (!Array.isArray(raw)) return { errors: [`${variable} must be a JSON array of merchants`] };
  const errors: string[] = [];
  const merchants: NamedMerchant[] = [];
  raw.forEach((entry: unknown, i) => {
    const name = `${variable}[${i}]`;
    const settings = entrySettings(entry, name, errors);
    if (settings) merchants.push({ name, settings });
  });
  return errors.length > 0 ? { errors } : { merchants };
}
