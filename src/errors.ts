import { Type } from 'typebox';

/**
 * One catalogue of error codes. Each code has one HTTP status and one line of documentation; the
 * OpenAPI document and the docs page are generated from this table, and a test keeps them in step.
 */
export const ERRORS = {
  VALIDATION_FAILED: { status: 400, title: 'Validation failed', doc: 'The request does not match the schema; see errors[].' },
  INVALID_JSON: { status: 400, title: 'Invalid JSON', doc: 'The body is not valid JSON, or nests deeper than 32 levels.' },
  MALFORMED_REQUEST: { status: 400, title: 'Malformed request', doc: 'The request is not valid HTTP (refused by the HTTP parser); the connection is closed.' },
  ORDER_ID_TOO_LONG: { status: 400, title: 'Order id too long', doc: 'The gateway order id would exceed 50 characters.' },
  ORDER_ID_INVALID: { status: 400, title: 'Order id invalid', doc: 'The order id (or mercant_id) is empty, or contains control characters, or invisible or text-direction characters (zero-width, bidirectional controls, other format characters) that would let it look like another id.' },
  AMOUNT_INVALID: { status: 400, title: 'Amount invalid', doc: 'The amount is not a positive whole number of rupiah, or does not equal the item sum.' },
  SERVER_KEY_REQUIRED: { status: 400, title: 'Server key required', doc: 'Changing the gateway mode or a gateway host (gateway.api_base_url, gateway.app_base_url) needs the server key, unmasked, in the same request: every gateway call carries the key to the configured host.' },
  EXPIRY_INVALID: { status: 400, title: 'Expiry invalid', doc: 'expire_at is malformed, in the past, or outside the allowed range.' },
  UNAUTHORIZED: { status: 401, title: 'Unauthorized', doc: 'Missing or wrong credentials.' },
  SIGNATURE_INVALID: { status: 401, title: 'Invalid signature', doc: 'The gateway notification signature does not verify.' },
  CSRF_INVALID: { status: 403, title: 'Form expired', doc: 'A console form was sent without a valid CSRF token: from a page older than 12 hours, one shown to another operator, or another site; reload the page and try again.' },
  CROSS_SITE_REFUSED: { status: 403, title: 'Cross-site request refused', doc: 'An operator POST, PUT or DELETE came from a page of another site (its Origin or Sec-Fetch-Site header says so); use the console itself, or a client that is not a browser.' },
  NOT_FOUND: { status: 404, title: 'Not found', doc: 'No such resource or route.' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed', doc: 'The route exists but not for this method.' },
  ORDER_ID_COLLISION: { status: 409, title: 'Order id collision', doc: 'Another order id sanitizes to the same gateway order id.' },
  ORDER_CONFLICT: { status: 409, title: 'Order conflict', doc: 'The order id exists with a different request, or is already paid.' },
  PAYMENT_NOT_PAID: { status: 409, title: 'Payment not paid', doc: 'A refund was asked for a payment that is not paid (pending, challenge, failed, cancelled or expired); `payment_status` names its state.' },
  PAYMENT_SETTLED: { status: 409, title: 'Payment already settled', doc: 'A cancel or expire was asked for a payment whose money has moved (settled, refunded or charged back); refund it instead. `payment_status` names its state.' },
  PAYMENT_CLOSED: { status: 409, title: 'Payment already ended', doc: 'The payment already ended (failed, cancelled, expired, fully refunded or charged back), so the action cannot apply; `payment_status` names its state.' },
  REFUND_IN_PROGRESS: { status: 409, title: 'Refund in progress', doc: 'Another refund of this payment is being made at the gateway (one at a time per payment); retry after it finished, see Retry-After.' },
  REFUND_NOT_MADE: { status: 409, title: 'Refund not made', doc: 'This refund request (same Idempotency-Key) had an unknown outcome and the gateway holds no refund under its key: nothing was refunded. Send a new request to refund.' },
  IDEMPOTENCY_IN_FLIGHT: { status: 409, title: 'Request in flight', doc: 'A request with this Idempotency-Key is still being processed.' },
  IDEMPOTENCY_MISMATCH: { status: 422, title: 'Idempotency key reused', doc: 'The Idempotency-Key was used with a different request body.' },
  REQUEST_TIMEOUT: { status: 408, title: 'Request timeout', doc: 'The request was not received completely in time; the connection is closed.' },
  HEADERS_TOO_LARGE: { status: 431, title: 'Request header fields too large', doc: 'The URL and headers together exceed 16 KiB; the connection is closed.' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload too large', doc: 'The body exceeds the size limit.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type', doc: 'Bodies must be application/json.' },
  CONFIG_CONFLICT: { status: 409, title: 'Configuration changed concurrently', doc: 'Another operator changed the runtime configuration at the same moment; read it again and retry.' },
  TOO_MANY_REQUESTS: { status: 429, title: 'Too many requests', doc: 'Too many failed attempts or requests; see Retry-After.' },
  INTERNAL: { status: 500, title: 'Internal error', doc: 'An unexpected error; details are in the log under the request id.' },
  GATEWAY_REFUSED: { status: 502, title: 'Gateway refused', doc: 'The gateway rejected the request; see gateway.status_code/status_message.' },
  GATEWAY_BAD_RESPONSE: { status: 502, title: 'Gateway bad response', doc: 'The gateway answered with something that could not be understood.' },
  GATEWAY_UNAVAILABLE: { status: 503, title: 'Gateway unavailable', doc: 'The gateway could not be reached; retry later.' },
  DATABASE_UNAVAILABLE: { status: 503, title: 'Database unavailable', doc: 'The database cannot be reached; retry later.' },
  SHUTTING_DOWN: { status: 503, title: 'Shutting down', doc: 'The instance is stopping; retry on another or later.' },
  GATEWAY_TIMEOUT: { status: 504, title: 'Gateway timeout', doc: 'The gateway did not answer in time; retrying with the same request is safe.' },
} as const;

export type ErrorCode = keyof typeof ERRORS;

export interface FieldError {
  path: string;
  message: string;
}

export interface GatewayErrorInfo {
  status_code: string;
  status_message: string;
}

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  request_id: string;
  errors?: FieldError[];
  gateway?: GatewayErrorInfo;
  [extra: string]: unknown;
}

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    detail?: string,
    readonly extras: { errors?: FieldError[]; gateway?: GatewayErrorInfo; headers?: Record<string, string>; data?: Record<string, unknown> } = {},
  ) {
    super(detail ?? ERRORS[code].doc);
    this.name = 'AppError';
    this.status = ERRORS[code].status;
  }
}

export function problem(code: ErrorCode, requestId: string, detail?: string, extras: AppError['extras'] = {}): ProblemDetails {
  const entry = ERRORS[code];
  const body: ProblemDetails = {
    type: `/docs#error-${code}`,
    title: entry.title,
    status: entry.status,
    detail: detail ?? entry.doc,
    code,
    request_id: requestId,
  };
  if (extras.errors) body.errors = extras.errors;
  if (extras.gateway) body.gateway = extras.gateway;
  if (extras.data) Object.assign(body, extras.data);
  return body;
}

/** The problem+json body as a schema, for route `response` declarations and the OpenAPI document. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: '`/docs#error-CODE`: the catalogue entry on the docs page' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.Unsafe<ErrorCode>({ type: 'string', enum: Object.keys(ERRORS), description: 'Catalogue code; see /docs#errors' }),
    request_id: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
    gateway: Type.Optional(Type.Object({ status_code: Type.String(), status_message: Type.String() })),
  },
  { additionalProperties: true, description: 'RFC 9457 problem details (application/problem+json)' },
);

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
// PostgreSQL SQLSTATEs: connection exceptions (08), insufficient resources (53: disk full, out of
// memory, too many connections), operator intervention (57P: shutdown, crash, cannot connect now),
// a statement timeout (57014), and the transient 40001 / 40P01 a retry resolves.
const PG_UNAVAILABLE = /^(08...|53...|57P0.|57014|40001|40P01)$/;
// better-sqlite3 reports extended codes (SQLITE_BUSY_SNAPSHOT, SQLITE_IOERR_WRITE, …).
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|NOMEM|READONLY)(_|$)/;
const UNAVAILABLE_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|database connection is not open|Cannot use a pool after calling end|driver has already been destroyed/i;

/**
 * True for errors that mean "the database cannot answer now" (down, overloaded, locked, full), as
 * opposed to a bug or a constraint: those become 503 so the caller (and the gateway) retries.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || PG_UNAVAILABLE.test(code) || SQLITE_UNAVAILABLE.test(code))) return true;
  return UNAVAILABLE_MESSAGES.test(err.message);
}
