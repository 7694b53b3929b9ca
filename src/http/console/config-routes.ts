import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from '../types.js';
import type { Deps } from '../../types.js';
import { AppError } from '../../platform/errors.js';
import { operatorActor } from '../plugins/actor.js';
import { schemaProblem } from '../plugins/errors.js';
import { configView } from '../api/config/views.js';
import {
  RuntimeConfigPatchSchema,
  changeRuntimeConfig,
  currentRuntimeConfig,
  type RuntimeConfigPatch,
} from '../../domain/runtime-config.js';
import { configForm, patchFromForm } from './config-page.js';
import { LangQuery, consoleDoc, doneAlert, errorAlert, type ConsoleContext } from './context.js';
import { consoleContext } from './scope.js';

function flatForm(body: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) {
    // A ticked checkbox arrives after its hidden "false": the last value is the one shown.
    const last = Array.isArray(v) ? v.at(-1) : v;
    if (typeof last === 'string') out[k] = last;
  }
  return out;
}

/** The form's patch checked with the API's own schema and validator, so a refusal reads the same on the page as from the API. */
function checkedPatch(req: FastifyRequest, patch: unknown): RuntimeConfigPatch {
  const validate = req.compileValidationSchema(RuntimeConfigPatchSchema, 'body');
  if (!validate(patch)) throw schemaProblem('body', validate.errors ?? []);
  return patch as RuntimeConfigPatch;
}

export const consoleConfigRoutes: RoutePlugin<
  Deps<'clock' | 'config' | 'formKeySecret' | 'logger' | 'runtimeConfig' | 'store' | 'version'>
> = async (app, services) => {
  const ctx = consoleContext(services);
  const page = async (
    req: FastifyRequest,
    reply: FastifyReply,
    o: {
      alert?: Parameters<ConsoleContext['render']>[2]['alert'];
      status?: number;
      errors?: Map<string, string>;
      submitted?: Record<string, string>;
    } = {},
  ) => {
    const v = ctx.view(req, reply);
    return ctx.render(reply, req, {
      title: v.t('title_config'),
      here: '/console/config',
      section: 'config',
      status: o.status,
      alert: o.alert,
      body: configForm(
        configView(await currentRuntimeConfig(services), services),
        ctx.csrfToken(req, reply),
        o.errors ?? new Map(),
        v,
        o.submitted,
        ctx.may(req, 'admin'),
      ),
    });
  };

  app.get(
    '/console/config',
    {
      config: { auth: 'op' },
      schema: {
        ...consoleDoc(
          'Console: configuration form',
          'The runtime configuration of GET /api/config as a form; secrets masked.',
        ),
        querystring: Type.Object({ done: Type.Optional(Type.String({ maxLength: 10 })), lang: LangQuery }),
      },
    },
    async (req, reply) =>
      page(req, reply, { alert: req.query.done === 'saved' ? doneAlert(ctx.view(req, reply), 'saved') : undefined }),
  );

  app.post(
    '/console/config',
    {
      config: { auth: 'op' },
      preHandler: app.csrfProtection,
      schema: {
        ...consoleDoc(
          'Console form: save configuration',
          "Saved as POST /api/config saves it: the same schema, checks, messages and audit line; needs the form's CSRF token.",
        ),
        body: Type.Record(
          Type.String({ maxLength: 100 }),
          Type.Union([Type.String({ maxLength: 4096 }), Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 4 })]),
        ),
      },
    },
    async (req, reply) => {
      const form = flatForm(req.body);
      const patch = patchFromForm(form, configView(await currentRuntimeConfig(services), services));
      try {
        await changeRuntimeConfig(services, checkedPatch(req, patch), operatorActor(req));
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        const list = err.extras.errors ?? [];
        const errors = new Map<string, string>();
        // The first message of a field is the one that names the rule it broke (later ones repeat the schema's alternatives).
        for (const e of list) if (!errors.has(e.path)) errors.set(e.path, e.message);
        const v = ctx.view(req, reply);
        const alert = errorAlert(v, err, req.id);
        return page(req, reply, {
          status: err.status,
          errors,
          submitted: form,
          alert: { ...alert, text: v.t('cfg_not_saved', { reason: alert.text }) },
        });
      }
      return reply.redirect('/console/config?done=saved', 303);
    },
  );
};
