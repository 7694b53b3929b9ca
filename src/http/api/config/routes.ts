import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { operatorActor } from '../../plugins/actor.js';
import { NoQuery } from '../../schemas/common.js';
import { withExample } from '../../schemas/examples.js';
import { CONFIG_EXAMPLE, ConfigDocumentSchema, configView } from './views.js';
import { RuntimeConfigPatchSchema, changeRuntimeConfig, currentRuntimeConfig } from '../../../domain/runtime-config.js';
import { problems } from '../../schemas/problems.js';

const ConfigAnswer = withExample(ConfigDocumentSchema, CONFIG_EXAMPLE);

/** `GET`/`POST /api/config`: the runtime document, stored in the database and shared by every instance. */
export const configRoutes: RoutePlugin<Deps<'config' | 'logger' | 'runtimeConfig' | 'store' | 'version'>> = async (
  app,
  services,
) => {
  app.get(
    '/api/config',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.health],
        summary: 'Effective runtime configuration',
        description:
          'Environment values overridden by the stored runtime configuration. Secrets are shown as `****` + last 4 characters (nothing for short ones).',
        querystring: NoQuery,
        response: { 200: ConfigAnswer },
      },
    },
    async () => configView(await currentRuntimeConfig(services), services),
  );

  app.post(
    '/api/config',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.health],
        summary: 'Change runtime configuration',
        description:
          'Any subset of the document; sections merge field by field, `null` removes an override (back to the environment value), a masked secret sent back leaves the secret unchanged. Unknown fields and `info` → 400. A change of `gateway.mode`, `gateway.api_base_url` or `gateway.app_base_url` needs `gateway.server_key` (unmasked) in the same request, else 400 `SERVER_KEY_REQUIRED`. In effect on every instance within about a second, and kept across restarts.',
        body: withExample(RuntimeConfigPatchSchema, {
          erp: { notify_url: 'https://erp.example.com/paylink/events', timeout_ms: 10000 },
          links: { default_expiry_minutes: 1440 },
        }),
        response: { 200: ConfigAnswer, ...problems(400, 403, 409) },
      },
    },
    async (req) => {
      await changeRuntimeConfig(services, req.body, operatorActor(req));
      return configView(await currentRuntimeConfig(services), services);
    },
  );
};
