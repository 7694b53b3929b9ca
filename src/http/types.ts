import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { PAYMENT_STATUSES } from '../domain/payment-status.js';
import type { PaymentStatus } from '../storage/store.js';
import { AppError } from '../errors.js';

export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/**
 * Who may call a route: `key` = API key when API_KEYS is set; `op` = operator Basic Auth;
 * `sig` = gateway signature (checked by the handler); `none` = public.
 * Every route declares one in `config.auth`; a route without it is refused at start-up.
 */
export type RouteAuth = 'key' | 'op' | 'sig' | 'none';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
    /** Body strings reach the handler even with a NUL in them (the handler deals with it); see nul-guard.ts. */
    rawStrings?: boolean;
  }
  interface FastifyRequest {
    /** The operator's user name once Basic Auth succeeded. */
    operatorUser?: string;
  }
}

/** The contract's endpoint groups, used as OpenAPI tags. */
export const TAGS = {
  health: 'Health & Config',
  links: 'Payment Links',
  ops: 'Payment Operations',
  webhook: 'Webhook',
  logs: 'Logs & Docs',
  dev: 'Dev/Test',
  operations: 'Operations',
} as const;

/** The contract's payment `status` values, as one schema for every route that takes or returns one. */
export const PaymentStatusSchema = Type.Unsafe<PaymentStatus>({ type: 'string', enum: [...PAYMENT_STATUSES] });

/**
 * A `date-time` query parameter as a Date. The schema's format check lets through values no clock
 * has (second 60, day 31 of a 30-day month), so those are refused here instead of being ignored.
 */
export function instantParam(name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw new AppError('VALIDATION_FAILED', `${name} is not a valid time.`, { errors: [{ path: name, message: 'must be an RFC 3339 date-time that exists' }] });
  return d;
}

/**
 * `{order_id}` in a path: the caller's id (URL-encoded) or the gateway's. Control characters are
 * refused here: no stored id has one, and PostgreSQL cannot even compare a NUL.
 */
export const OrderIdParams = Type.Object(
  { order_id: Type.String({ minLength: 1, maxLength: 512, pattern: '^[^\\u0000-\\u001f\\u007f]+$', description: 'The original order_id (URL-encoded), the gateway_order_id, or the gateway transaction_id.' }) },
  { additionalProperties: false },
);
