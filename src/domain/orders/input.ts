/**
 * Amounts, items and customer details as the gateway accepts them. Everything here is checked
 * before any gateway call, so input errors are 400s that never reach the gateway.
 */
import { AppError } from '../../platform/errors.js';
import {
  ITEM_TEXT_MAX,
  USAGE_LIMIT_MAX,
  truncate,
  type Customer,
  type CustomerLimits,
  type Item,
} from '../../gateway/order.js';
import type { CustomerInput, ItemInput } from './schemas.js';
import { largestMaximum, methodMaximum } from '../../gateway/amount-limits.js';
import type { OpenAmount } from '../../gateway/order.js';

/** Largest amount we accept: beyond it JSON numbers stop being exact. */
export const MAX_AMOUNT = Number.MAX_SAFE_INTEGER;
/** Our cap on item lines; the gateway's page and dashboard become unusable long before. */
export const MAX_ITEMS = 100;

export { CORE_CUSTOMER_LIMITS, LINK_CUSTOMER_LIMITS, type CustomerLimits } from '../../gateway/order.js';

function fieldError(code: 'VALIDATION_FAILED' | 'AMOUNT_INVALID', path: string, message: string): AppError {
  return new AppError(code, `${path} ${message}.`, { errors: [{ path, message }] });
}

/**
 * The integer and fraction digits of an amount, read with one rule that holds for rupiah: a mark
 * (`.` or `,`) followed by one or two digits at the end is the decimal mark; marks followed by
 * groups of three digits are thousands separators (a rupiah amount never has three decimals). So
 * `150000,00`, `150.000,00`, `150,000.00` and `150.000` are all 150000; `150,000,00` fits neither
 * reading and is refused.
 */
function amountDigits(s: string): { whole: string; fraction: string } | undefined {
  const plain = /^(\d+)(?:[.,](\d{1,2}))?$/.exec(s);
  if (plain) return { whole: plain[1] ?? '', fraction: plain[2] ?? '' };
  const grouped = /^(\d{1,3}(?:([.,])\d{3})+)(?:([.,])(\d{1,2}))?$/.exec(s);
  if (!grouped || (grouped[3] !== undefined && grouped[3] === grouped[2])) return undefined;
  return { whole: (grouped[1] ?? '').replace(/[.,]/g, ''), fraction: grouped[4] ?? '' };
}

/**
 * Whole rupiah from text a person typed or a report holds: `150000`, `150.000` (Indonesian
 * thousands), `150,000`, `150000,00`, `150.000,00`, `Rp 150.000`, `IDR 150000`; never negative.
 * `not_an_amount` for anything else, `fraction` for a part of a rupiah.
 */
export function readRupiahText(raw: string): number | 'not_an_amount' | 'fraction' {
  const s = raw
    .trim()
    .replace(/^(rp|idr)\.?\s*/i, '')
    .replace(/[\s\u00A0]/g, '');
  const d = amountDigits(s);
  if (!d || d.whole.length > 15) return 'not_an_amount';
  if (Number(d.fraction) !== 0) return 'fraction';
  return Number(d.whole);
}

const INT = /^-?\d{1,16}$/;

function toInt(v: number | string): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : undefined;
  const t = v.trim();
  if (!INT.test(t)) return undefined;
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A number too large to be held exactly (beyond 2^53 − 1), written as a number or as digits. */
function tooLarge(v: number | string): boolean {
  if (typeof v === 'number') return Number.isFinite(v) ? Math.abs(v) > MAX_AMOUNT : true;
  const t = v.trim();
  return /^\d+$/.test(t) && !Number.isSafeInteger(Number(t));
}

/** A positive whole number of rupiah; a string of digits is accepted. */
export function parseNominal(v: number | string, path = 'nominal'): number {
  if (tooLarge(v)) throw fieldError('AMOUNT_INVALID', path, 'amount too large');
  const n = toInt(v);
  if (n === undefined || (typeof v === 'string' && !/^\d+$/.test(v.trim())))
    throw fieldError('AMOUNT_INVALID', path, 'must be a whole number of rupiah');
  if (n < 1) throw fieldError('AMOUNT_INVALID', path, 'must be at least 1');
  return n;
}

/** How many purchases a link takes: a whole number 1–1,000,000 (the gateway's range); absent → 1. */
export function parseUsageLimit(v: number | string | undefined, path = 'usage_limit'): number {
  if (v === undefined) return 1;
  const n = typeof v === 'string' && !/^\d+$/.test(v.trim()) ? undefined : toInt(v);
  if (n === undefined || n < 1 || n > USAGE_LIMIT_MAX)
    throw fieldError('VALIDATION_FAILED', path, `must be a whole number from 1 to ${USAGE_LIMIT_MAX}`);
  return n;
}

/** Items as the gateway wants them: integer prices (negative for discounts), quantity ≥ 1, names ≤ 50. */
export function normalizeItems(items: ItemInput[], path = 'item'): Item[] {
  if (items.length === 0) throw fieldError('VALIDATION_FAILED', path, 'must contain at least one item');
  if (items.length > MAX_ITEMS) throw fieldError('VALIDATION_FAILED', path, `must contain at most ${MAX_ITEMS} items`);
  return items.map((it, i) => {
    const name = truncate(it.name.trim(), ITEM_TEXT_MAX);
    if (name.length === 0) throw fieldError('VALIDATION_FAILED', `${path}[${i}].name`, 'must not be empty');
    if (tooLarge(it.price)) throw fieldError('AMOUNT_INVALID', `${path}[${i}].price`, 'amount too large');
    const price = toInt(it.price);
    if (price === undefined)
      throw fieldError('AMOUNT_INVALID', `${path}[${i}].price`, 'must be a whole number of rupiah');
    const quantity = toInt(it.quantity);
    if (quantity === undefined || quantity < 1)
      throw fieldError('VALIDATION_FAILED', `${path}[${i}].quantity`, 'must be a whole number of at least 1');
    const out: Item = { name, price, quantity };
    const id = it.id === undefined ? undefined : String(it.id).trim();
    if (id) out.id = truncate(id, ITEM_TEXT_MAX);
    return out;
  });
}

/** Σ price × quantity; must be a positive safe integer (the gateway requires gross = item sum). */
export function itemsTotal(items: Item[], path = 'item'): number {
  let sum = 0;
  for (const it of items) {
    const line = it.price * it.quantity;
    sum += line;
    if (!Number.isSafeInteger(line) || !Number.isSafeInteger(sum))
      throw fieldError('AMOUNT_INVALID', path, 'total is too large');
  }
  if (sum < 1) throw fieldError('AMOUNT_INVALID', path, 'total (Σ price × quantity) must be at least 1');
  return sum;
}

const rupiah = (n: number) => n.toLocaleString('en-US');

/** A link or Snap page offering `methods` (none: every method) cannot take more than the largest of their limits. */
export function assertPageAmount(nominal: number, methods: readonly string[], path = 'nominal'): void {
  const max = largestMaximum(methods);
  if (nominal > max)
    throw fieldError(
      'AMOUNT_INVALID',
      path,
      `is above ${rupiah(max)}, the largest amount the gateway takes for ${methods.length === 0 ? 'any payment method' : `the enabled payment methods (${methods.join(', ')})`}`,
    );
}

/** A charge cannot exceed its payment method's limit. */
export function assertChargeAmount(nominal: number, method: string, path = 'nominal'): void {
  const max = methodMaximum(method);
  if (nominal > max)
    throw fieldError(
      'AMOUNT_INVALID',
      path,
      `is above ${rupiah(max)}, the largest amount the gateway takes for ${method}`,
    );
}

function boundsError(path: string, message: string): AppError {
  return new AppError('OPEN_AMOUNT_INVALID', `${path} ${message}.`, { errors: [{ path, message }] });
}

/** A whole amount of rupiah for an open link's bound: a number or a string of digits; undefined when it is not one. */
function boundAmount(v: number | string): number | undefined {
  if (tooLarge(v)) return undefined;
  if (typeof v === 'string' && !/^\d+$/.test(v.trim())) return undefined;
  return toInt(v);
}

/**
 * The bounds of an open-amount link, each problem a 400 naming its field: `min_nominal` at least 1
 * (the gateway's least amount), `max_nominal` from min to the largest amount the page's methods take,
 * `preset_nominal` (optional) within them, and no `nominal` (the payer chooses it).
 */
export function parseOpenAmount(
  input: {
    nominal?: unknown;
    min_nominal?: number | string;
    max_nominal?: number | string;
    preset_nominal?: number | string;
  },
  methods: readonly string[],
): OpenAmount {
  const problems: AppError[] = [];
  if (input.nominal !== undefined)
    problems.push(boundsError('nominal', 'must be absent on an open-amount link: the payer enters the amount'));
  const read = (field: 'min_nominal' | 'max_nominal' | 'preset_nominal', required: boolean): number | undefined => {
    const v = input[field];
    if (v === undefined) {
      if (required) problems.push(boundsError(field, 'is required on an open-amount link'));
      return undefined;
    }
    const n = boundAmount(v);
    if (n === undefined || n < 1) {
      problems.push(boundsError(field, 'must be a whole number of rupiah of at least 1'));
      return undefined;
    }
    return n;
  };
  const min = read('min_nominal', true);
  const max = read('max_nominal', true);
  const preset = read('preset_nominal', false);
  const limit = largestMaximum(methods);
  if (max !== undefined && max > limit)
    problems.push(
      boundsError(
        'max_nominal',
        `is above ${rupiah(limit)}, the largest amount the gateway takes for ${methods.length === 0 ? 'any payment method' : `the enabled payment methods (${methods.join(', ')})`}`,
      ),
    );
  if (min !== undefined && max !== undefined && max < min)
    problems.push(boundsError('max_nominal', `must be at least min_nominal (${rupiah(min)})`));
  if (preset !== undefined && ((min !== undefined && preset < min) || (max !== undefined && preset > max)))
    problems.push(boundsError('preset_nominal', 'must lie from min_nominal to max_nominal'));
  const [first] = problems;
  if (first && problems.length === 1) throw first;
  if (first)
    throw new AppError(
      'OPEN_AMOUNT_INVALID',
      `${problems.length} problems: ${problems.map((e) => e.message.replace(/\.$/, '')).join('; ')}.`,
      {
        errors: problems.flatMap((e) => e.extras.errors ?? []),
      },
    );
  if (min === undefined || max === undefined) throw new AppError('INTERNAL');
  return preset === undefined ? { min, max } : { min, max, preset };
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Trimmed, empty fields dropped, names cut to the gateway's limits. An e-mail or phone number that
 * does not fit is refused instead: a truncated address would reach the wrong person.
 */
export function normalizeCustomer(
  c: CustomerInput | undefined,
  limits: CustomerLimits,
  path = 'customer',
): Customer | undefined {
  if (!c) return undefined;
  const out: Customer = {};
  for (const k of ['first_name', 'last_name'] as const) {
    const v = c[k]?.trim();
    if (v) out[k] = truncate(v, limits[k]);
  }
  const email = c.email?.trim();
  if (email) {
    if (!EMAIL.test(email)) throw fieldError('VALIDATION_FAILED', `${path}.email`, 'is not an e-mail address');
    if (email.length > limits.email)
      throw fieldError('VALIDATION_FAILED', `${path}.email`, `must be at most ${limits.email} characters`);
    out.email = email;
  }
  const phone = c.phone?.trim();
  if (phone) {
    if (phone.length > limits.phone)
      throw fieldError('VALIDATION_FAILED', `${path}.phone`, `must be at most ${limits.phone} characters`);
    out.phone = phone;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
