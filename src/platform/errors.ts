import { Type } from 'typebox';

/**
 * One catalogue of error codes. Each code has one HTTP status and one line of documentation; the
 * OpenAPI document and the docs page are generated from this table, and a test keeps them in step.
 */
export const ERRORS = {
  VALIDATION_FAILED: {
    status: 400,
    title: 'Validation failed',
    doc: 'The request does not match the schema; see errors[].',
  },
  INVALID_JSON: {
    status: 400,
    title: 'Invalid JSON',
    doc: 'The body is not valid JSON, or nests deeper than 32 levels.',
  },
  MALFORMED_REQUEST: {
    status: 400,
    title: 'Malformed request',
    doc: 'The request is not valid HTTP (refused by the HTTP parser); the connection is closed.',
  },
  ORDER_ID_TOO_LONG: {
    status: 400,
    title: 'Order id too long',
    doc: 'The gateway order id would exceed 50 characters.',
  },
  ORDER_ID_INVALID: {
    status: 400,
    title: 'Order id invalid',
    doc: 'The order id (or mercant_id) is empty, or contains control characters, or invisible or text-direction characters (zero-width, bidirectional controls, other format characters) that would let it look like another id.',
  },
  AMOUNT_INVALID: {
    status: 400,
    title: 'Amount invalid',
    doc: 'The amount is not a positive whole number of rupiah, or does not equal the item sum.',
  },
  OPEN_AMOUNT_INVALID: {
    status: 400,
    title: 'Open amount invalid',
    doc: 'An open-amount link (amount_type "open") needs min_nominal ≥ 1 and max_nominal ≥ min_nominal within the enabled payment methods\' limit, an optional preset_nominal between them, and no nominal.',
  },
  SERVER_KEY_REQUIRED: {
    status: 400,
    title: 'Server key required',
    doc: 'Changing the gateway mode or a gateway host (gateway.api_base_url, gateway.app_base_url) needs the server key, unmasked, in the same request: every gateway call carries the key to the configured host.',
  },
  EXPIRY_INVALID: {
    status: 400,
    title: 'Expiry invalid',
    doc: 'expire_at is malformed, in the past, or outside the allowed range.',
  },
  UNAUTHORIZED: { status: 401, title: 'Unauthorized', doc: 'Missing or wrong credentials.' },
  SIGNATURE_INVALID: {
    status: 401,
    title: 'Invalid signature',
    doc: 'The gateway notification signature does not verify.',
  },
  CSRF_INVALID: {
    status: 403,
    title: 'Form expired',
    doc: 'A console form was sent without a valid CSRF token: from a page older than 12 hours, one shown to another operator, or another site; reload the page and try again.',
  },
  FORM_KEY_INVALID: {
    status: 403,
    title: 'Form key missing',
    doc: 'A console form that acts (a confirmed refund, cancel or expire, a delivery retry) came without the one-time key of the page that showed it, or with one made for another operator, another action or other values, or older than 12 hours: nothing was done. Open the page again and confirm there.',
  },
  CROSS_SITE_REFUSED: {
    status: 403,
    title: 'Cross-site request refused',
    doc: 'An operator POST, PUT or DELETE came from a page of another site (its Origin or Sec-Fetch-Site header says so); use the console itself, or a client that is not a browser.',
  },
  FORBIDDEN: {
    status: 403,
    title: 'Forbidden',
    doc: "The operator's role does not allow this: a viewer reads, finance also refunds, cancels, expires, imports reports and retries deliveries, an admin also changes configuration, accounts, API keys and operators.",
  },
  NOT_FOUND: { status: 404, title: 'Not found', doc: 'No such resource or route.' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed', doc: 'The route exists but not for this method.' },
  ORDER_ID_COLLISION: {
    status: 409,
    title: 'Order id collision',
    doc: 'Another order id sanitizes to the same gateway order id.',
  },
  ORDER_CONFLICT: {
    status: 409,
    title: 'Order conflict',
    doc: 'The order id exists with a different request, or is already paid.',
  },
  PAYMENT_NOT_PAID: {
    status: 409,
    title: 'Payment not paid',
    doc: 'A refund was asked for a payment that is not paid (pending, challenge, failed, cancelled or expired); `payment_status` names its state.',
  },
  PAYMENT_NOT_SETTLED: {
    status: 409,
    title: 'Payment not settled yet',
    doc: 'A refund was asked for a card payment that is captured but not settled yet: the gateway refunds only settled payments (it answers 412). Cancel it to void it before settlement, or refund once it settled. `payment_status` names its state.',
  },
  PAYMENT_SETTLED: {
    status: 409,
    title: 'Payment already settled',
    doc: 'A cancel or expire was asked for a payment whose money has moved (settled, refunded or charged back); refund it instead. `payment_status` names its state.',
  },
  PAYMENT_CLOSED: {
    status: 409,
    title: 'Payment already ended',
    doc: 'The payment already ended (failed, cancelled, expired, fully refunded or charged back), so the action cannot apply; `payment_status` names its state.',
  },
  REFUND_IN_PROGRESS: {
    status: 409,
    title: 'Refund in progress',
    doc: 'Another refund of this payment is being made at the gateway (one at a time per payment); retry after it finished, see Retry-After.',
  },
  REFUND_NOT_SUPPORTED: {
    status: 422,
    title: 'Refund not supported',
    doc: 'The gateway does not refund payments of this method (bank transfer, convenience store, …; it refunds card, GoPay, ShopeePay, DANA, OVO, QRIS, Kredivo and Akulaku): nothing was asked of it. Refund the payer another way.',
  },
  REFUND_NOT_MADE: {
    status: 409,
    title: 'Refund not made',
    doc: 'This refund request (same Idempotency-Key) had an unknown outcome and the gateway holds no refund under its key: nothing was refunded. Send a new request to refund.',
  },
  IDEMPOTENCY_IN_FLIGHT: {
    status: 409,
    title: 'Request in flight',
    doc: 'A request with this Idempotency-Key is still being processed.',
  },
  IDEMPOTENCY_MISMATCH: {
    status: 422,
    title: 'Idempotency key reused',
    doc: 'The Idempotency-Key was used with a different request body.',
  },
  REQUEST_TIMEOUT: {
    status: 408,
    title: 'Request timeout',
    doc: 'The request was not received completely in time; the connection is closed.',
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    title: 'Request header fields too large',
    doc: 'The URL and headers together exceed 16 KiB; the connection is closed.',
  },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload too large', doc: 'The body exceeds the size limit.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type', doc: 'Bodies must be application/json.' },
  RECONCILIATION_CONFLICT: {
    status: 409,
    title: 'Payments changed during the import',
    doc: 'A payment a gateway report matched changed (a notification or a refund arrived) between the reading of the report and the writing of its fees; nothing of the import was kept. Import the same file again.',
  },
  HISTORY_NOT_CONFIGURED: {
    status: 409,
    title: 'No BI-SNAP credentials',
    doc: "The account's transaction history is read through BI-SNAP: set its BI-SNAP credentials (gateway.snap_bi) first.",
  },
  OPERATOR_EXISTS: {
    status: 409,
    title: 'Operator exists',
    doc: 'An operator of that username exists already (or it is the operator of log_user).',
  },
  ACCOUNT_EXISTS: {
    status: 409,
    title: 'Account exists',
    doc: 'An account with this id exists already (disabled ones included: an id is never reused).',
  },
  ACCOUNT_DEFAULT: {
    status: 409,
    title: 'Default account',
    doc: 'The default account (the one the environment configures) cannot be disabled.',
  },
  CONFIG_CONFLICT: {
    status: 409,
    title: 'Configuration changed concurrently',
    doc: 'Another operator changed the runtime configuration at the same moment; read it again and retry.',
  },
  TOO_MANY_REQUESTS: {
    status: 429,
    title: 'Too many requests',
    doc: 'Too many failed attempts or requests; see Retry-After.',
  },
  INTERNAL: {
    status: 500,
    title: 'Internal error',
    doc: 'An unexpected error; details are in the log under the request id.',
  },
  GATEWAY_REFUSED: {
    status: 502,
    title: 'Gateway refused',
    doc: 'The gateway rejected the request; see gateway.status_code/status_message.',
  },
  GATEWAY_BAD_RESPONSE: {
    status: 502,
    title: 'Gateway bad response',
    doc: 'The gateway answered with something that could not be understood.',
  },
  GATEWAY_UNAVAILABLE: {
    status: 503,
    title: 'Gateway unavailable',
    doc: 'The gateway could not be reached; retry later.',
  },
  DATABASE_UNAVAILABLE: {
    status: 503,
    title: 'Database unavailable',
    doc: 'The database cannot be reached; retry later.',
  },
  SHUTTING_DOWN: { status: 503, title: 'Shutting down', doc: 'The instance is stopping; retry on another or later.' },
  GATEWAY_TIMEOUT: {
    status: 504,
    title: 'Gateway timeout',
    doc: 'The gateway did not answer in time; retrying with the same request is safe.',
  },
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
    readonly extras: {
      errors?: FieldError[];
      gateway?: GatewayErrorInfo;
      headers?: Record<string, string>;
      data?: Record<string, unknown>;
    } = {},
  ) {
    super(detail ?? ERRORS[code].doc);
    this.name = 'AppError';
    this.status = ERRORS[code].status;
  }
}

export function problem(
  code: ErrorCode,
  requestId: string,
  detail?: string,
  extras: AppError['extras'] = {},
): ProblemDetails {
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
    code: Type.Unsafe<ErrorCode>({
      type: 'string',
      enum: Object.keys(ERRORS),
      description: 'Catalogue code; see /docs#errors',
    }),
    request_id: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
    gateway: Type.Optional(Type.Object({ status_code: Type.String(), status_message: Type.String() })),
  },
  { additionalProperties: true, description: 'RFC 9457 problem details (application/problem+json)' },
);

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
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
  if (
    typeof code === 'string' &&
    (UNAVAILABLE_CODES.has(code) || PG_UNAVAILABLE.test(code) || SQLITE_UNAVAILABLE.test(code))
  )
    return true;
  return UNAVAILABLE_MESSAGES.test(err.message);
}

/** One complaint of a JSON-Schema validator (Ajv, TypeBox): where, which rule, and the rule's parameters. */
export interface SchemaIssue {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
  /** The schema node the rule belongs to (Ajv's `verbose` option). */
  parentSchema?: unknown;
}

type SchemaNode = Record<string, unknown>;
const isNode = (v: unknown): v is SchemaNode => typeof v === 'object' && v !== null && !Array.isArray(v);
const members = (s: SchemaNode): SchemaNode[] => [...((s.anyOf ?? s.oneOf ?? []) as unknown[])].filter(isNode);
const listed = (values: unknown[]): string =>
  values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ');
const decodePointer = (p: string): string[] =>
  p === ''
    ? []
    : p
        .replace(/^\//, '')
        .split('/')
        .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));

/** The schema that governs the value at `segments` under `schema`, following properties, items and unions. */
function schemaAt(schema: unknown, segments: string[]): SchemaNode | undefined {
  if (!isNode(schema)) return undefined;
  if (segments.length === 0) return schema;
  const [head = '', ...rest] = segments;
  const props = schema.properties;
  if (isNode(props) && head in props) return schemaAt(props[head], rest);
  if (isNode(schema.items) && /^\d+$/.test(head)) return schemaAt(schema.items, rest);
  if (isNode(schema.additionalProperties)) return schemaAt(schema.additionalProperties, rest);
  for (const m of members(schema)) {
    const found = schemaAt(m, segments);
    if (found) return found;
  }
  return undefined;
}

/** The accepted literal values of a schema made only of constants (const, enum, a union of them). */
function literals(s: SchemaNode): unknown[] | undefined {
  if ('const' in s) return [s.const];
  if (Array.isArray(s.enum)) return s.enum as unknown[];
  const ms = members(s);
  if (ms.length === 0) return undefined;
  const out: unknown[] = [];
  for (const m of ms) {
    const l = literals(m);
    if (!l) return undefined;
    out.push(...l);
  }
  return out;
}

const TYPE_WORDS: Record<string, string> = {
  integer: 'a whole number',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

/** What a schema accepts, in plain words ("one of: a, b", "a whole number from 5 to 43200"); undefined when it says no more than its rule. */
function accepted(s: SchemaNode): string | undefined {
  const values = literals(s);
  if (values) return values.length === 1 ? listed(values) : `one of: ${listed(values)}`;
  const ms = members(s);
  if (ms.length > 0) {
    const nullable = ms.some((m) => m.type === 'null');
    const parts = ms
      .filter((m) => m.type !== 'null')
      .map((m) => accepted(m) ?? (typeof m.type === 'string' ? TYPE_WORDS[m.type] : undefined));
    if (parts.some((p) => p === undefined)) return undefined;
    return `${[...new Set(parts)].join(' or ')}${nullable ? ' (or null)' : ''}`;
  }
  if (s.type === 'integer' || s.type === 'number') {
    const what = TYPE_WORDS[s.type] ?? 'a number';
    const min = typeof s.minimum === 'number' ? s.minimum : undefined;
    const max = typeof s.maximum === 'number' ? s.maximum : undefined;
    if (min !== undefined && max !== undefined) return `${what} from ${min} to ${max}`;
    if (min !== undefined) return `${what} of at least ${min}`;
    if (max !== undefined) return `${what} of at most ${max}`;
    return what;
  }
  return undefined;
}

/** One rule's complaint in plain words, for schemas `accepted` cannot describe as a whole. */
function ruleMessage(issue: SchemaIssue): string {
  const p = issue.params ?? {};
  switch (issue.keyword) {
    case 'type':
      return `must be ${String(p.type ?? '')
        .split(',')
        .map((t) => TYPE_WORDS[t] ?? t)
        .join(' or ')}`;
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters`;
    case 'maxLength':
      return `must be at most ${String(p.limit)} characters`;
    case 'minItems':
      return `must list at least ${String(p.limit)}`;
    case 'maxItems':
      return `must list at most ${String(p.limit)}`;
    case 'uniqueItems':
      return 'must not list the same value twice';
    case 'pattern':
      return `has the wrong format (expected ${String(p.pattern)})`;
    case 'minimum':
      return `must be at least ${String(p.limit)}`;
    case 'maximum':
      return `must be at most ${String(p.limit)}`;
    case 'exclusiveMinimum':
      return `must be greater than ${String(p.limit)}`;
    case 'exclusiveMaximum':
      return `must be less than ${String(p.limit)}`;
    case 'const':
      return `must be ${listed([p.allowedValue])}`;
    case 'enum':
      return Array.isArray(p.allowedValues) ? `must be one of: ${listed(p.allowedValues)}` : 'is not an accepted value';
    default:
      return issue.message ?? 'is not valid';
  }
}

/**
 * A validator's complaints as one plain message per problem: a value outside an enum names the
 * accepted values, a number out of range names the range, an unknown or missing field says so.
 * `root` is the schema that was checked (to describe a field as a whole rather than each branch
 * of its union; without it, the issues' own `parentSchema` serve); paths are JSON pointers relative to it, returned with dots (`links.default_expiry_minutes`).
 */
export function plainFieldErrors(root: unknown, issues: readonly SchemaIssue[]): FieldError[] {
  const groups = new Map<string, SchemaIssue[]>();
  for (const issue of issues) {
    const p = issue.params ?? {};
    const child =
      typeof p.missingProperty === 'string'
        ? p.missingProperty
        : typeof p.additionalProperty === 'string'
          ? p.additionalProperty
          : undefined;
    const pointer = `${issue.instancePath ?? ''}${child === undefined ? '' : `/${child.replace(/~/g, '~0').replace(/\//g, '~1')}`}`;
    const list = groups.get(pointer) ?? [];
    list.push(issue);
    groups.set(pointer, list);
  }
  const out: FieldError[] = [];
  for (const [pointer, list] of groups) {
    const segments = decodePointer(pointer);
    const path = segments.join('.');
    let message: string;
    if (list.some((i) => typeof i.params?.additionalProperty === 'string')) message = 'is not a known field';
    else if (list.some((i) => typeof i.params?.missingProperty === 'string')) message = 'is required';
    else {
      // The field's schema as a whole: found from the root, else the union the validator reports on.
      const union = list.find(
        (i) => (i.keyword === 'anyOf' || i.keyword === 'oneOf') && isNode(i.parentSchema),
      )?.parentSchema;
      const only = list.length === 1 ? list[0]?.parentSchema : undefined;
      const found = schemaAt(root, segments) ?? union ?? only;
      const schema = isNode(found) ? found : undefined;
      const words = schema ? accepted(schema) : undefined;
      const first =
        list.find(
          (i) => i.keyword !== 'anyOf' && i.keyword !== 'oneOf' && i.keyword !== 'const' && i.keyword !== 'type',
        ) ??
        list.find((i) => i.keyword !== 'anyOf' && i.keyword !== 'oneOf') ??
        list[0];
      message = words ? `must be ${words}` : first ? ruleMessage(first) : 'is not valid';
    }
    out.push({ path, message });
  }
  return out.slice(0, 50);
}
