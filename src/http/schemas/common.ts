/**
 * The schema pieces every route uses: bounded strings, nullable fields, the shared path parameters
 * and headers. A route declares what it takes and answers with these, so the bounds and the
 * wording of the OpenAPI document come from one place.
 */
import { Type, type TSchema } from 'typebox';
import { AppError } from '../../platform/errors.js';
import { PAYMENT_STATUSES } from '../../domain/reports/status-machine.js';
import type { PaymentStatus } from '../../model/payment.js';
import type { CsvSeparator } from '../csv.js';

/** A string of at most `maxLength` characters (255 when not said). */
export const Str = (maxLength = 255, description?: string) =>
  Type.String({ maxLength, ...(description ? { description } : {}) });
export const OptionalStr = (maxLength = 255) => Type.Optional(Str(maxLength));
/** `schema` or null. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const NullableStr = (maxLength = 255) => Nullable(Str(maxLength));
export const NullableInt = Nullable(Type.Integer());

/** Operator GETs take no query string: a stray `?password=` is refused rather than ignored (and logged). */
export const NoQuery = Type.Object({}, { additionalProperties: false });

/** The payment `status` values, as one schema for every route that takes or returns one. */
export const PaymentStatusSchema = Type.Unsafe<PaymentStatus>({ type: 'string', enum: [...PAYMENT_STATUSES] });

/**
 * `sep` of a CSV answer: `,` (RFC 4180, the default) or `;`, the list separator a spreadsheet set to
 * the Indonesian locale (or most European ones) splits on when it opens a file with a double click.
 */
export const CsvSeparatorParam = Type.Optional(
  Type.Unsafe<CsvSeparator>({
    type: 'string',
    enum: [',', ';'],
    default: ',',
    description:
      'Between cells: `,` (default) or `;` (for a spreadsheet whose list separator is `;`, as in the Indonesian locale)',
  }),
);

/** The `Idempotency-Key` header of the creating and acting routes. */
export const IdemHeaders = Type.Object({
  'idempotency-key': Type.Optional(Str(255, 'Replays the first response for 24 h.')),
});

/**
 * `{order_id}` in a path: the caller's id (URL-encoded) or the gateway's. Control characters are
 * refused here: no stored id has one, and PostgreSQL cannot even compare a NUL.
 */
export const OrderIdParams = Type.Object(
  {
    order_id: Type.String({
      minLength: 1,
      maxLength: 512,
      pattern: '^[^\\u0000-\\u001f\\u007f]+$',
      description: 'The original order_id (URL-encoded), the gateway_order_id, or the gateway transaction_id.',
    }),
  },
  { additionalProperties: false },
);

/** An ERP event id in a path (a UUID, or any id of letters, digits and dashes). */
export const EventId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9-]+$' });

/** A count in a query string (`limit`, `tail`): digits only, so anything else is a schema error, never NaN. */
export const Count = (description: string, digits = 4) =>
  Type.String({ pattern: `^[0-9]{1,${digits}}$`, maxLength: digits, description });

/** A `Count` parameter as a number: `fallback` when absent, 400 outside 1..max. */
export function countParam(name: string, value: string | undefined, fallback: number, max: number): number {
  return boundedParam(name, value, fallback, 1, max);
}

/** A `Count` parameter that may be 0 or more (a wait in seconds): `fallback` when absent, 400 outside min..max. */
export function boundedParam(
  name: string,
  value: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new AppError('VALIDATION_FAILED', `${name} must be ${min}..${max}.`, {
      errors: [{ path: name, message: `must be ${min}..${max}` }],
    });
  return n;
}

/**
 * A `date-time` query parameter as a Date. The schema's format check lets through values no clock
 * has (second 60, day 31 of a 30-day month), so those are refused here instead of being ignored.
 */
export function instantParam(name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const d = new Date(value);
  if (Number.isNaN(d.getTime()))
    throw new AppError('VALIDATION_FAILED', `${name} is not a valid time.`, {
      errors: [{ path: name, message: 'must be an RFC 3339 date-time that exists' }],
    });
  return d;
}
