import { Stream } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../../platform/errors.js';

/**
 * Where `value` holds a NUL (U+0000) in a string or a key, as a dotted path in the style of the
 * schema errors (`querystring.mercant_id`, `item.0.name`); undefined when nowhere. PostgreSQL text cannot store a NUL and refuses the whole statement, so such input is
 * refused at the edge (SQLite would take it: both databases answer the same way this way).
 * Recursion is bounded by the JSON depth limit.
 */
export function nulPath(value: unknown, at: string): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? at : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = nulPath(value[i], `${at}.${i}`);
      if (p) return p;
    }
    return undefined;
  }
  // A streamed body (a file being uploaded) is not data yet, and its request and socket objects
  // point back at each other.
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value) || value instanceof Stream)
    return undefined;
  for (const [k, v] of Object.entries(value)) {
    if (k.includes('\u0000')) return `${at}.${k.replace(/\u0000/g, '\\u0000')}`;
    const p = nulPath(v, `${at}.${k}`);
    if (p) return p;
  }
  return undefined;
}

/**
 * preValidation: a NUL anywhere in the path parameters, query or body is a 400. Routes marked
 * `config.rawStrings` (the gateway notification pipeline) take body strings as they come and
 * deal with a NUL themselves.
 */
export async function refuseNul(req: FastifyRequest): Promise<void> {
  const body = req.routeOptions.config.rawStrings ? undefined : nulPath(req.body, 'body')?.replace(/^body\.?/, '');
  const where = nulPath(req.params, 'params') ?? nulPath(req.query, 'querystring') ?? (body === '' ? '(body)' : body);
  if (!where) return;
  const errors = [{ path: where, message: 'must not contain NUL (U+0000)' }];
  // A new order's id with a control character has its own code (as domain/order-id.ts gives it).
  if (where === 'order_id' || where === 'mercant_id')
    throw new AppError('ORDER_ID_INVALID', `${where} contains a NUL character (U+0000).`, { errors });
  throw new AppError('VALIDATION_FAILED', 'The request contains a NUL character (U+0000).', { errors });
}
