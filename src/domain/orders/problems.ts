/**
 * Every problem of a body in one answer: the input checks of an order are independent, so they all
 * run and their refusals are merged, instead of a caller fixing one field per round trip.
 */
import { AppError, type FieldError } from '../../platform/errors.js';
import type { CustomerInput, ItemInput } from './schemas.js';
import { LINK_CUSTOMER_LIMITS, normalizeCustomer, normalizeItems, parseNominal } from './input.js';
import { parseExpireAtText } from './expiry.js';
import { assertPrintableId, gatewayOrderIdFor } from './ids.js';

/** A refusal about the input's own fields (400 with `errors`), as opposed to a conflict or an outage. */
function isFieldRefusal(err: unknown): err is AppError {
  return err instanceof AppError && err.status === 400 && (err.extras.errors?.length ?? 0) > 0;
}

export class InputProblems {
  private readonly found: AppError[] = [];

  /** `check()`'s value; undefined when it refused a field (kept for the answer). Anything else is thrown. */
  take<T>(check: () => T): T | undefined {
    try {
      return check();
    } catch (err) {
      if (!isFieldRefusal(err)) throw err;
      this.found.push(err);
      return undefined;
    }
  }

  get errors(): FieldError[] {
    return this.found.flatMap((e) => e.extras.errors ?? []);
  }

  /**
   * Throws one refusal naming every problem when there is any: a single one as it was, several
   * under their common code (VALIDATION_FAILED when their codes differ), each in `errors`.
   */
  throwIfAny(): void {
    const [first, ...rest] = this.found;
    if (!first) return;
    if (rest.length === 0) throw first;
    const code = this.found.every((e) => e.code === first.code) ? first.code : 'VALIDATION_FAILED';
    const each = this.found.map((e) => e.message.replace(/\.$/, '')).join('; ');
    throw new AppError(code, `${this.found.length} problems: ${each}.`, { errors: this.errors });
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isAmount = (v: unknown): v is number | string => typeof v === 'number' || typeof v === 'string';
const isString = (v: unknown): v is string => typeof v === 'string';

function isItemList(v: unknown): v is ItemInput[] {
  return (
    Array.isArray(v) && v.every((i) => isObject(i) && isString(i.name) && isAmount(i.price) && isAmount(i.quantity))
  );
}

function isCustomer(v: unknown): v is CustomerInput {
  return isObject(v) && Object.values(v).every(isString);
}

const EXPIRE_AT_FORMAT =
  'must be ISO 8601 with an offset (2026-12-01T10:00:00+07:00) or "YYYY-MM-DD HH:mm:ss" in Jakarta time';

/**
 * What the order checks say about the fields of a body its schema refused for other reasons, so
 * that answer names these problems too. Only fields of the right type are judged, and only by
 * rules that need no clock or stored state (a time in the past is judged once the body is whole).
 */
export function orderFieldProblems(body: unknown): FieldError[] {
  if (!isObject(body)) return [];
  const p = new InputProblems();
  if (isString(body.order_id)) p.take(() => gatewayOrderIdFor(body.order_id as string));
  if (isString(body.mercant_id)) p.take(() => assertPrintableId(body.mercant_id as string, 'mercant_id'));
  if (isAmount(body.nominal)) p.take(() => parseNominal(body.nominal as number | string));
  for (const field of ['item', 'items'] as const) {
    const list = body[field];
    if (isItemList(list)) p.take(() => normalizeItems(list, field));
  }
  if (isCustomer(body.customer)) p.take(() => normalizeCustomer(body.customer as CustomerInput, LINK_CUSTOMER_LIMITS));
  if (isString(body.expire_at) && !parseExpireAtText(body.expire_at.trim()))
    p.take(() => {
      throw new AppError('EXPIRY_INVALID', `expire_at ${EXPIRE_AT_FORMAT}.`, {
        errors: [{ path: 'expire_at', message: EXPIRE_AT_FORMAT }],
      });
    });
  return p.errors;
}
