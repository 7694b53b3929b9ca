import type { RouteHandlerMethod } from 'fastify';
import { Type } from 'typebox';
import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { configSecretValues } from '../../../config/env.js';
import { secretValues } from '../../../config/runtime.js';
import { withExample } from '../../schemas/examples.js';
import { createSecretScrubber, redactFields, redactHeaders, scrubValues } from '../../../platform/logging/redact.js';

const ECHO_METHODS = ['DELETE', 'GET', 'PATCH', 'POST', 'PUT', 'OPTIONS'];
const Anything = Type.Unsafe<unknown>({ description: 'Any value' });
const EchoSchema = Type.Object({
  method: Type.String(),
  path: Type.String(),
  query: Type.Object({}, { additionalProperties: true }),
  headers: Type.Object(
    {},
    {
      additionalProperties: true,
      description:
        'authorization, x-api-key and cookies are shown as [redacted]; so are secret-looking fields of the query and body',
    },
  ),
  body: Anything,
});

/** The opening of every Dev/Test operation's description. */
export const DEV_ONLY =
  'Dev/Test only: served with `LOG_EXPOSE_API` (never in production), behind the operator credentials.';

const ECHO_DESCRIPTION =
  `${DEV_ONLY} Answers what reached this service after every proxy on the way: the method, the path, the query, the headers and the JSON body. ` +
  'Credentials (`authorization`, `x-api-key`, cookies) and secret-looking fields of the query and the body are shown as `[redacted]`, and every configured secret is masked wherever its value appears.';

function echoExample(method: string) {
  const withBody = method === 'POST' || method === 'PUT' || method === 'PATCH';
  return {
    method,
    path: '/echo',
    query: { probe: '1' },
    headers: {
      host: 'paylink.example.com',
      'x-forwarded-for': '203.0.113.7',
      authorization: '[redacted]',
      ...(withBody ? { 'content-type': 'application/json' } : {}),
    },
    body: withBody ? { order_id: 'INV/2026/0042:1', server_key: '[redacted]' } : null,
  };
}

const ECHO2_DESCRIPTION =
  `${DEV_ONLY} Answers the request body byte for byte, with the request's own \`Content-Type\` (\`application/octet-stream\` when there is none): ` +
  "to see what a client library or a proxy does to a body. The answer is sandboxed (`Content-Security-Policy: default-src 'none'; sandbox`, `nosniff`), so echoed HTML never runs as a page of this service.";

/**
 * Dev/Test endpoints: registered only with LOG_EXPOSE_API, so with the flag off
 * they answer exactly like any unknown path. Operator auth still applies when they are on.
 * (`/test-notify-erp` lives with the ERP events.)
 */
export const devRoutes: RoutePlugin<Deps<'config' | 'operator' | 'runtimeConfig'>> = async (app, services) => {
  if (!services.config.exposeDevApi) return;

  const echo: RouteHandlerMethod = async (req) => {
    const q = req.url.indexOf('?');
    // Secrets are hidden by field name, and also by value wherever they appear (a key pasted
    // into an unrelated field, a header, the path).
    const s = await services.runtimeConfig.current();
    const secrets = createSecretScrubber();
    secrets.add([...secretValues(s), ...configSecretValues(services.config), services.operator.pass]);
    return scrubValues(
      {
        method: req.method,
        path: q < 0 ? req.url : req.url.slice(0, q),
        query: redactFields(req.query ?? {}),
        headers: redactHeaders(req.headers),
        body: redactFields(req.body ?? null),
      },
      secrets,
    );
  };
  // One route per method: each shows the answer to its own method in the reference.
  for (const method of ECHO_METHODS) {
    app.route({
      method,
      url: '/echo',
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.dev],
        summary: 'Echo the request as JSON (credentials redacted)',
        description: ECHO_DESCRIPTION,
        response: { 200: withExample(EchoSchema, echoExample(method)) },
      },
      handler: echo,
    });
  }

  await app.register(async (scope) => {
    // Only here are bodies taken as raw bytes of any type; everywhere else they must be JSON.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    scope.route({
      method: ECHO_METHODS,
      url: '/echo2',
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.dev],
        summary: 'Echo the raw body bytes with the request content type',
        description: ECHO2_DESCRIPTION,
        response: {
          200: Type.Unsafe<Buffer | string>({
            description: 'The request body, byte for byte',
            content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
          }),
        },
      },
      handler: async (req, reply) => {
        const type = req.headers['content-type'] ?? 'application/octet-stream';
        // Echoed HTML must not run as a page of this origin.
        reply
          .header('content-type', type)
          .header('x-content-type-options', 'nosniff')
          .header('content-security-policy', "default-src 'none'; sandbox");
        return reply.send(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
      },
    });
  });
};
