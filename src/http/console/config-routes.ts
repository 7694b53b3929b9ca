import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { App } from '../types.js';
import { configForm, patchFromForm } from './config-page.js';
import { consoleDoc, type ConsoleContext } from './context.js';

type Doc = Record<string, Record<string, unknown>>;

/** The API's own answer, asked with the operator's own credentials: the same checks, messages and audit line. */
async function api(app: App, req: FastifyRequest, method: 'GET' | 'POST', payload?: object): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await app.inject({
    method,
    url: '/api/config',
    headers: { authorization: req.headers.authorization ?? '', 'x-request-id': req.id, ...(payload ? { 'content-type': 'application/json' } : {}) },
    ...(payload ? { payload: JSON.stringify(payload) } : {}),
  });
  const body: unknown = JSON.parse(res.body);
  return { status: res.statusCode, body: body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {} };
}

function flatForm(body: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) {
    // A ticked checkbox arrives after its hidden "false": the last value is the one shown.
    const last = Array.isArray(v) ? v.at(-1) : v;
    if (typeof last === 'string') out[k] = last;
  }
  return out;
}

export async function consoleConfigRoutes(app: App, ctx: ConsoleContext): Promise<void> {
  app.get('/console/config', { config: { auth: 'op' }, schema: { ...consoleDoc('Console: configuration form', 'The runtime configuration of GET /api/config as a form; secrets masked.'), querystring: Type.Object({ done: Type.Optional(Type.String({ maxLength: 10 })) }) } }, async (req, reply) => {
    const { body } = await api(app, req, 'GET');
    return ctx.render(reply, req, {
      title: 'Configuration',
      section: 'config',
      body: configForm(body as Doc, reply.generateCsrf(), new Map()),
      alert: req.query.done === 'saved' ? { kind: 'ok', text: 'Configuration saved; every instance uses it within about a second.' } : undefined,
    });
  });

  app.post(
    '/console/config',
    { config: { auth: 'op' }, preHandler: app.csrfProtection, schema: { ...consoleDoc('Console form: save configuration', 'Sent on to POST /api/config with the operator\'s credentials, so its checks and messages are the API\'s; needs the form\'s CSRF token.'), body: Type.Record(Type.String({ maxLength: 100 }), Type.Union([Type.String({ maxLength: 4096 }), Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 4 })])) } },
    async (req, reply) => {
      const form = flatForm(req.body);
      const current = (await api(app, req, 'GET')).body as Doc;
      const patch = patchFromForm(form, current);
      const res = await api(app, req, 'POST', patch);
      if (res.status === 200) return reply.redirect('/console/config?done=saved', 303);
      const errors = new Map<string, string>();
      const list = Array.isArray(res.body.errors) ? (res.body.errors as Array<{ path?: unknown; message?: unknown }>) : [];
      // The first message of a field is the one that names the rule it broke (later ones repeat the schema's alternatives).
      for (const e of list) if (typeof e.path === 'string' && typeof e.message === 'string' && !errors.has(e.path.replace(/^body\./, ''))) errors.set(e.path.replace(/^body\./, ''), e.message);
      const detail = typeof res.body.detail === 'string' ? res.body.detail : 'The configuration was not saved.';
      return ctx.render(reply, req, {
        title: 'Configuration',
        section: 'config',
        status: res.status,
        alert: { kind: 'error', text: `Not saved: ${detail}`, items: list.map((e) => `${String(e.path)}: ${String(e.message)}`) },
        body: configForm(current, reply.generateCsrf(), errors, form),
      });
    },
  );
}
