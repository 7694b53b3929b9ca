import type { App } from '../types.js';
import { TAGS } from '../types.js';
import type { Services } from '../../types.js';
import { AppError, ProblemSchema } from '../../errors.js';
import { applyOverrides, secretValues, type RuntimeSettings } from '../../settings.js';
import { registerLogSecrets } from '../../logging/logger.js';
import { ConfigDocumentSchema, ConfigPatchSchema, NoQuery, effectiveProblems, maskedDocument, mergePatch } from '../runtime-config.js';

const SAVE_ATTEMPTS = 3;

async function document(services: Services, effective: RuntimeSettings) {
  registerLogSecrets(services.logger, secretValues(effective));
  const row = await services.store.config.get();
  return {
    ...maskedDocument(effective),
    info: {
      version: services.version,
      database: services.store.kind,
      dev_endpoints: services.config.exposeDevApi,
      production: services.config.isProduction,
      config_version: row?.version ?? 0,
      updated_at: row?.updatedAt ?? null,
      updated_by: row?.updatedBy ?? null,
    },
  };
}

/** `GET`/`POST /api/config` (CONTRACT §3): the runtime document, stored in the database and shared by every instance. */
export async function configRoutes(app: App, services: Services): Promise<void> {
  app.get(
    '/api/config',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.health],
        summary: 'Effective runtime configuration',
        description: 'Environment values overridden by the stored runtime configuration. Secrets are shown as `****` + last 4 characters (nothing for short ones).',
        querystring: NoQuery,
        response: { 200: ConfigDocumentSchema },
      },
    },
    async () => document(services, await services.settings.current()),
  );

  app.post(
    '/api/config',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.health],
        summary: 'Change runtime configuration',
        description:
          'Any subset of the document; sections merge field by field, `null` removes an override (back to the environment value), a masked secret sent back leaves the secret unchanged. Unknown fields and `info` → 400. In effect on every instance within about a second, and kept across restarts.',
        body: ConfigPatchSchema,
        response: { 200: ConfigDocumentSchema, 400: ProblemSchema, 409: ProblemSchema },
      },
    },
    async (req) => {
      for (let attempt = 1; attempt <= SAVE_ATTEMPTS; attempt++) {
        const stored = await services.settings.overrides();
        const { next, changed } = mergePatch(stored.document, req.body);
        const effective = applyOverrides(services.settings.defaults(), next);
        const problems = effectiveProblems(effective, { production: services.config.isProduction, simulatorAvailable: services.config.gateway.mode === 'simulator' });
        if (problems.length > 0) throw new AppError('VALIDATION_FAILED', 'The configuration would not be usable.', { errors: problems });
        if (changed.length === 0) return document(services, await services.settings.current());
        if (await services.settings.save(next, stored.version, req.operatorUser ?? null)) {
          req.log.info({ audit: 'config_changed', by: req.operatorUser, fields: changed, config_version: stored.version + 1, ip: req.ip }, 'runtime configuration changed');
          return document(services, await services.settings.current());
        }
      }
      throw new AppError('CONFIG_CONFLICT');
    },
  );
}
