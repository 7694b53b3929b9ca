/**
 * Identifier rules. The caller's `order_id` is kept verbatim; the gateway only sees
 * the sanitized form, and the lossy mapping is stored at creation, never reversed.
 */
import { randomBytes } from 'node:crypto';
import { AppError } from '../../platform/errors.js';
import { ORDER_ID_MAX as GATEWAY_ORDER_ID_MAX } from '../../gateway/order.js';

export { ORDER_ID_MAX as GATEWAY_ORDER_ID_MAX } from '../../gateway/order.js';

const OUTSIDE_GATEWAY_CHARSET = /[^A-Za-z0-9\-_~.]/gu;
// C0, DEL and C1 controls; also lone surrogates, which cannot be stored or logged faithfully.
const FORBIDDEN =
  /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/u;

/**
 * Characters that change how an id looks without showing themselves: bidirectional controls
 * (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) reorder what follows, and zero-width or
 * otherwise invisible ones (U+200B–U+200D, U+2060, U+FEFF, U+00AD, variation selectors, Hangul
 * fillers, tag characters) take no room. With them one order id can be made to look exactly like
 * another in the console, the logs and the ERP. That is every format character (Unicode category
 * Cf), every default-ignorable code point, and the line and paragraph separators. Visible
 * look-alikes (a Cyrillic "а", a no-break space) keep their length, so sanitizing maps them onto
 * the same gateway id as the original, where the collision rule (409) catches them.
 */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}\p{Zl}\p{Zp}]/u;

const codePoint = (c: string) => `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;

/** Refuses an id with an invisible or text-direction character, naming the first one and where it is. */
function assertVisible(value: string, field: string): void {
  const m = INVISIBLE.exec(value);
  if (!m) return;
  const at = Array.from(value.slice(0, m.index)).length + 1;
  const message = `contains an invisible or text-direction character (${codePoint(m[0])} at character ${at}); such characters make one id look like another`;
  throw new AppError('ORDER_ID_INVALID', `${field} ${message}.`, { errors: [{ path: field, message }] });
}

/**
 * Every character (code point) outside `A-Z a-z 0-9 - _ ~ .` becomes `.`, so the result has as many
 * characters as the input has code points.
 */
export function sanitizeOrderId(orderId: string): string {
  return orderId.replace(OUTSIDE_GATEWAY_CHARSET, '.');
}

/** The part of the original order id before the first `:`, or the whole id when it has none. */
export function deriveMercantId(orderId: string): string {
  const i = orderId.indexOf(':');
  return i < 0 ? orderId : orderId.slice(0, i);
}

/** A caller's identifier that is stored and sent on (a mercant_id): no control, invisible or text-direction characters. */
export function assertPrintableId(value: string, field: string): void {
  if (FORBIDDEN.test(value))
    throw new AppError('VALIDATION_FAILED', `${field} contains control characters.`, {
      errors: [{ path: field, message: 'contains control characters' }],
    });
  assertVisible(value, field);
}

/** Validates a caller's order id and returns its gateway form; throws a 400 AppError otherwise. */
export function gatewayOrderIdFor(orderId: string, field = 'order_id'): string {
  if (orderId.length === 0 || orderId.trim().length === 0) {
    throw new AppError('ORDER_ID_INVALID', `${field} must not be empty.`, {
      errors: [{ path: field, message: 'must not be empty' }],
    });
  }
  if (FORBIDDEN.test(orderId)) {
    throw new AppError('ORDER_ID_INVALID', `${field} contains control characters.`, {
      errors: [{ path: field, message: 'contains control characters' }],
    });
  }
  assertVisible(orderId, field);
  if (deriveMercantId(orderId).trim().length === 0) {
    throw new AppError(
      'ORDER_ID_INVALID',
      `${field} must not start with ':' (the part before the first ':' is the mercant_id).`,
      { errors: [{ path: field, message: 'must have a mercant_id before the first ":"' }] },
    );
  }
  const gatewayOrderId = sanitizeOrderId(orderId);
  // "." and ".." are path segments a URL resolves away: the gateway could never be asked about them.
  if (/^\.+$/.test(gatewayOrderId)) {
    throw new AppError(
      'ORDER_ID_INVALID',
      `${field} has no letter, digit, '-', '_' or '~' after sanitizing ("${gatewayOrderId}").`,
      {
        errors: [{ path: field, message: "must contain a letter, digit, '-', '_' or '~'" }],
      },
    );
  }
  if (gatewayOrderId.length > GATEWAY_ORDER_ID_MAX) {
    throw new AppError(
      'ORDER_ID_TOO_LONG',
      `${field} is ${gatewayOrderId.length} characters after sanitizing; the gateway allows ${GATEWAY_ORDER_ID_MAX}.`,
      {
        errors: [{ path: field, message: `must be at most ${GATEWAY_ORDER_ID_MAX} characters after sanitizing` }],
      },
    );
  }
  return gatewayOrderId;
}

/**
 * A Payment Link id is part of the customer's URL: 128 random bits, so nobody can guess another
 * customer's link. Lowercase hex with a prefix fits the gateway's `[a-z0-9-]{1,50}`.
 */
export function newPaymentLinkId(): string {
  return `pl-${randomBytes(16).toString('hex')}`;
}
