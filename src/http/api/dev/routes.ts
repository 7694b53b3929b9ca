import { Type } from 'typebox';
import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { configSecretValues } from '../../../config/env.js';
import { secretValues } from '../../../config/runtime.js';
import { createSecretScrubber, redactFields, redactHeaders, scrubValues } from '../../../platform/logging/redact.js';

const ECHO_METHODS = ['DELETE', 'GET', 'PATCH', 'POST', 'PUT', 'OPTIONS'];
const Anything = Type.Unsafe<unknown>({ description: 'Any value' });
const EchoSchema = Type.Object({
  method: Type.String(),
  path: Type.String(),
  query: Type.Object({}, { additionalProperties: true }),
  headers: Type.Object({}, { additionalProperties: true, description: 'authorization, x-api-key and cookies are shown as [redacted]; so are secret-looking fields of the query and body' }),
  body: Anything,
});

/**
 * Dev/Test endpoints: registered only with LOG_EXPOSE_API, so with the flag off
 * they answer exactly like any unknown path. Operator auth still applies when they are on.
 * (`/test-notify-erp` lives with the ERP delivery code.)
 */
export const devRoutes: RoutePlugin<Deps<'config' | 'operator' | 'settings'>> = async (app, services) => {
  if (!services.config.exposeDevApi) return;

  app.route({
    method: ECHO_METHODS,
    url: '/echo',
    config: { auth: 'op' },
    schema: { tags: [TAGS.dev], summary: 'Echo the request as JSON (credentials redacted)', response: { 200: EchoSchema } },
    handler: async (req) => {
      const q = req.url.indexOf('?');
      // Secrets are hidden by field name, and also by value wherever they appear (a key pasted
      // into an unrelated field, a header, the path).
      const s = await services.settings.current();
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
    },
  });

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
        response: { 200: Type.Unsafe<Buffer | string>({ description: 'The request body, byte for byte', content: { '*/*': { schema: { type: 'string', format: 'binary' } } } }) },
      },
      handler: async (req, reply) => {
        const type = req.headers['content-type'] ?? 'application/octet-stream';
        // Echoed HTML must not run as a page of this origin.
        reply.header('content-type', type).header('x-content-type-options', 'nosniff').header('content-security-policy', "default-src 'none'; sandbox");
        return reply.send(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
      },
    });
  });
};
