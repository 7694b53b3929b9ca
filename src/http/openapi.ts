import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { ERRORS, ProblemSchema, type ErrorCode } from '../platform/errors.js';
import type { Deps } from '../types.js';
import { TAGS, type RouteAuth } from './types.js';
import { ERP_EVENT_EXAMPLE } from './schemas/examples.js';
import { introduction } from './reference/guide.js';
import { ErpEventSchema } from '../erp/events.js';

const SECURITY: Record<RouteAuth, Array<Record<string, string[]>>> = {
  op: [{ operatorBasic: [] }],
  key: [{ apiKeyBearer: [] }, { apiKeyHeader: [] }],
  doc: [{ operatorBasic: [] }, { apiKeyBearer: [] }, { apiKeyHeader: [] }],
  // The signature is inside the body (Midtrans `signature_key`), not a header scheme OpenAPI can describe.
  sig: [],
  none: [],
};

const TAG_DOCS: Record<string, string> = {
  [TAGS.health]: 'Liveness and the runtime configuration.',
  [TAGS.links]: 'Payment links for the ERP.',
  [TAGS.ops]: 'Core API charges, Snap tokens and status checks.',
  [TAGS.webhook]: 'Notifications from the gateway.',
  [TAGS.logs]: 'Log files, this description and the rendered reference.',
  [TAGS.dev]: 'Only served with LOG_EXPOSE_API; never in production.',
  [TAGS.operations]: 'Transactions, ERP deliveries and metrics for operators.',
  [TAGS.accounts]: 'The merchants (Midtrans MIDs) this service serves: their configuration and API keys.',
};

const RESPONSE_NAMES: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Unprocessable',
  429: 'TooManyRequests',
  500: 'Internal',
  502: 'BadGateway',
  503: 'Unavailable',
  504: 'GatewayTimeout',
};

/** One reusable response per status, listing the catalogue codes it can carry. */
function problemResponses() {
  const out: Record<string, unknown> = {};
  for (const [status, name] of Object.entries(RESPONSE_NAMES)) {
    const codes = (Object.keys(ERRORS) as ErrorCode[]).filter((c) => String(ERRORS[c].status) === status);
    out[name] = {
      description:
        codes.length > 0
          ? `Problem details; \`code\` is one of ${codes.map((c) => `\`${c}\``).join(', ')}`
          : 'Problem details',
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    };
  }
  return out;
}

function webhooks() {
  const header = (name: string, description: string, required = true) => ({
    name,
    in: 'header',
    required,
    description,
    schema: { type: 'string' },
  });
  return {
    'payment.status_changed': {
      post: {
        summary: 'Payment event delivered to ERP_NOTIFY_URL',
        description:
          'At least once, in order per order_id; the same event keeps its webhook-id (= event_id) on every retry. Any 2xx is success; failures retry with exponential backoff for about 3 days. Verify `webhook-signature` with a Standard Webhooks library and the shared secret (see the introduction), deduplicate on `event_id`, and ignore an event whose `status_version` is not higher than the last one applied for its order.',
        parameters: [
          header('webhook-id', 'Stable event id (deduplicate on it)'),
          header('webhook-timestamp', 'Unix seconds'),
          header('webhook-signature', '`v1,<base64 HMAC-SHA256 of "id.timestamp.body">` when a secret is set', false),
        ],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: ErpEventSchema, example: ERP_EVENT_EXAMPLE } },
        },
        responses: { '2XX': { description: 'Received' } },
      },
    },
  };
}

type Doc = Record<string, unknown>;

/** Plain descriptions for answers declared without one. */
const ANSWER_DESCRIPTIONS: Record<string, string> = { '200': 'OK', '201': 'Created', '204': 'No content' };

/**
 * What a route's schema may leave unsaid: a description (its summary, as a sentence) and the plain
 * words of an answer declared without a description. Examples sit on the schemas themselves.
 */
function completeOperations(paths: Record<string, unknown>): void {
  for (const item of Object.values(paths)) {
    if (!item || typeof item !== 'object') continue;
    for (const op of Object.values(item as Record<string, Doc>)) {
      if (!op.description && typeof op.summary === 'string') op.description = `${op.summary}.`;
      for (const [status, r] of Object.entries((op.responses ?? {}) as Record<string, Doc>)) {
        if (r.description === 'Default Response') r.description = ANSWER_DESCRIPTIONS[status] ?? 'Answer';
      }
    }
  }
}

/** The mark that opens the description of an operation an API key cannot call. */
export const OPERATOR_ONLY = '**Operator only** (HTTP Basic operator credentials; an API key is refused).';

/** Operator operations stay described for the ERP developer, marked as not theirs to call. */
function markOperatorOnly(paths: Record<string, unknown>): void {
  for (const item of Object.values(paths)) {
    for (const op of Object.values((item ?? {}) as Record<string, Doc>)) {
      if (op?.['x-auth'] !== 'op') continue;
      const description = typeof op.description === 'string' ? op.description : '';
      if (!description.startsWith(OPERATOR_ONLY)) op.description = `${OPERATOR_ONLY} ${description}`.trim();
    }
  }
}

type Operation = {
  parameters?: unknown[];
  requestBody?: unknown;
  responses?: Record<string, unknown>;
  'x-auth'?: RouteAuth;
  'x-html'?: boolean;
};

/** An HTML page's errors: the page itself, or problem details for a client that asks for JSON. */
const htmlError = (status: number) => ({
  description: `An HTML page, or problem details (${RESPONSE_NAMES[status] ?? status})`,
  content: {
    'text/html': { schema: { type: 'string' } },
    'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
  },
});

/** A response a route declared with the Problem schema: @fastify/swagger lists it as `application/json`. */
function isProblemResponse(r: unknown): boolean {
  const schema = (r as { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> } | undefined)
    ?.content?.['application/json']?.schema;
  const props = schema?.properties;
  return props !== undefined && ['type', 'title', 'status', 'code'].every((k) => k in props);
}

/** The catalogue's errors each operation can answer with, by its auth and its inputs. */
function addErrorResponses(method: string, op: Operation): void {
  // 400 for every operation: any request can be refused at the edge (an unknown or malformed
  // query parameter, a NUL character, a malformed URL), whatever the operation declares.
  const statuses = new Set<number>([400, 500]);
  // A body is parsed on every method but GET and HEAD, declared or not: too large or of an
  // unsupported type, it is refused before the handler.
  if (op.requestBody || method !== 'get') [413, 415].forEach((s) => statuses.add(s));
  if (op['x-auth'] === 'op' || op['x-auth'] === 'doc') [401, 429].forEach((s) => statuses.add(s));
  // An operator change sent from another site's page is refused (CROSS_SITE_REFUSED).
  if (op['x-auth'] === 'op' && method !== 'get') statuses.add(403);
  if (op['x-auth'] === 'key' || op['x-auth'] === 'sig') statuses.add(401);
  if (op['x-auth'] !== 'none') statuses.add(503);
  op.responses ??= {};
  // Every error is sent as application/problem+json: declared ones point at the shared responses too.
  for (const [status, r] of Object.entries(op.responses))
    if (RESPONSE_NAMES[Number(status)] && isProblemResponse(r)) statuses.add(Number(status));
  for (const s of statuses)
    if (!op.responses[String(s)] || isProblemResponse(op.responses[String(s)]))
      op.responses[String(s)] = { $ref: `#/components/responses/${RESPONSE_NAMES[s]}` };
  if (!op['x-html']) return;
  // Operator console pages answer HTML, their errors too (an unknown payment or log file: 404; a
  // form posted without its CSRF token: 403).
  statuses.add(404);
  if (method !== 'get') statuses.add(403);
  for (const s of statuses) op.responses[String(s)] = htmlError(s);
}

/** What an API key may see, stated where the ERP developer reads about keys. */
const ONE_TENANT =
  "The keys of one account act for the same merchant (one tenant): any of them can read and act on any of the account's orders. The keys of API_KEYS are the `default` account's; a key made with POST /api/accounts/{id}/api-keys acts for that account, and another account's orders answer 404 as unknown ones. Idempotency-Keys are kept per API key.";

/** Registers @fastify/swagger; must run before the route groups so it sees every route. */
export async function registerOpenApi(app: FastifyInstance, services: Deps<'config' | 'version'>): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'paylink',
        version: services.version,
        description: introduction(),
      },
      tags: Object.values(TAGS).map((name) => ({ name, description: TAG_DOCS[name] })),
      // The samples in the rendered reference name this base, so they can be copied as they are.
      servers: [{ url: services.config.publicBaseUrl, description: 'This service (PUBLIC_BASE_URL)' }],
      components: {
        securitySchemes: {
          operatorBasic: { type: 'http', scheme: 'basic', description: 'Operator credentials (log_user / log_pass)' },
          apiKeyBearer: { type: 'http', scheme: 'bearer', description: `One of API_KEYS. ${ONE_TENANT}` },
          apiKeyHeader: {
            type: 'apiKey',
            in: 'header',
            name: 'X-API-Key',
            description: `One of API_KEYS. ${ONE_TENANT}`,
          },
        },
      },
    },
    transform: ({ schema, url, route }) => {
      const auth = route.config?.auth ?? 'none';
      // The operator console (every route under /console) answers HTML, its errors included.
      const html =
        url === '/console' ||
        url.startsWith('/console/') ||
        (Array.isArray(schema.produces) && schema.produces.includes('text/html'));
      return {
        schema: {
          ...schema,
          // With API_KEYS empty the description is as open as the ERP endpoints it describes.
          security: auth === 'doc' && services.config.apiKeys.length === 0 ? SECURITY.none : SECURITY[auth],
          'x-auth': auth,
          ...(html ? { 'x-html': true } : {}),
        } as typeof schema,
        url,
      };
    },
    transformObject: (documentObject) => {
      if (!('openapiObject' in documentObject)) return documentObject.swaggerObject;
      const doc = documentObject.openapiObject;
      doc.components ??= {};
      doc.components.schemas = { ...doc.components.schemas, Problem: ProblemSchema as object };
      doc.components.responses = { ...doc.components.responses, ...(problemResponses() as object) };
      for (const item of Object.values(doc.paths ?? {})) {
        for (const [method, op] of Object.entries(item ?? {}))
          if (op && typeof op === 'object' && 'responses' in op) addErrorResponses(method, op as Operation);
      }
      completeOperations(doc.paths ?? {});
      markOperatorOnly(doc.paths ?? {});
      // Only the groups this instance serves: Dev/Test is listed with LOG_EXPOSE_API only.
      const used = new Set(
        Object.values(doc.paths ?? {}).flatMap((item) =>
          Object.values(item ?? {}).flatMap((op) =>
            op && typeof op === 'object' && 'tags' in op && Array.isArray(op.tags) ? (op.tags as string[]) : [],
          ),
        ),
      );
      doc.tags = (doc.tags ?? []).filter((t) => used.has(t.name));
      Object.assign(doc, { webhooks: webhooks(), 'x-error-catalogue': ERRORS });
      return doc;
    },
  });
}
