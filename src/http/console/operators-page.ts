/**
 * The admins' operators page: who signs in by name, with what role, disabled or locked; forms to
 * add one (a generated password is shown on the answer itself, never put in a URL), set a role,
 * disable or enable, and lift a lock. The same domain functions as /api/operators, so the role
 * check and the audit lines are theirs.
 */
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from '../types.js';
import type { Deps } from '../../types.js';
import { AppError } from '../../platform/errors.js';
import { OPERATOR_ROLES } from '../../model/operator.js';
import {
  addOperator,
  changeOperator,
  listOperators,
  unlockOperator,
  type OperatorView,
} from '../../domain/operators/manage.js';
import { operatorActor } from '../plugins/actor.js';
import { html, type Html } from './html.js';
import type { Alert } from './layout.js';
import { EMPTY, type View } from './view.js';
import { LangQuery, consoleDoc, errorAlert } from './context.js';
import { consoleContext } from './scope.js';

const BASE = '/console/operators';
const Name = Type.String({ minLength: 1, maxLength: 64 });
const RoleField = Type.Union(OPERATOR_ROLES.map((r) => Type.Literal(r)));

function roleSelect(v: View, selected: string, id: string): Html {
  return html`<select name="role" id="${id}">${OPERATOR_ROLES.map((r) => html`<option value="${r}"${r === selected ? html` selected` : ''}>${v.t(`role_${r}`)}</option>`)}</select>`;
}

function row(o: OperatorView, v: View, csrf: string): Html {
  const { t } = v;
  const hidden = html`<input type="hidden" name="_csrf" value="${csrf}">`;
  const at = `${BASE}/${encodeURIComponent(o.username)}`;
  return html`<tr data-operator="${o.username}">
<td class="mono">${o.username}</td>
<td>${t(`role_${o.role}`)}</td>
<td>${o.accounts === null ? t('op_all_accounts') : o.accounts.join(', ')}</td>
<td>${o.disabled ? t('op_disabled') : t('op_enabled')}${o.locked_until ? html` · <strong>${t('op_locked_until', { time: v.when(o.locked_until) })}</strong>` : ''}</td>
<td class="hide-narrow">${o.last_sign_in_at ? v.when(o.last_sign_in_at) : EMPTY}</td>
<td><form method="post" action="${at}" class="inline-form">${hidden}<label class="inline">${roleSelect(v, o.role, `role-${o.username}`)}</label><button type="submit" class="secondary">${t('op_set_role')}</button></form>
<form method="post" action="${at}" class="inline-form">${hidden}<input type="hidden" name="disabled" value="${o.disabled ? 'false' : 'true'}"><button type="submit" class="${o.disabled ? 'secondary' : 'danger'}">${o.disabled ? t('op_enable') : t('op_disable')}</button></form>
${o.locked_until ? html`<form method="post" action="${at}/unlock" class="inline-form">${hidden}<button type="submit" class="secondary">${t('op_unlock')}</button></form>` : ''}</td>
</tr>`;
}

function body(list: OperatorView[], v: View, csrf: string): Html {
  const { t } = v;
  return html`<p class="muted">${t('op_intro')}</p>
<div class="table-wrap"><table>
<thead><tr><th scope="col">${t('op_username')}</th><th scope="col">${t('op_role')}</th><th scope="col">${t('op_accounts')}</th><th scope="col">${t('op_state')}</th><th scope="col" class="hide-narrow">${t('op_last_sign_in')}</th><th scope="col">${t('op_actions')}</th></tr></thead>
<tbody>${list.length === 0 ? html`<tr><td colspan="6" class="muted">${t('op_none')}</td></tr>` : list.map((o) => row(o, v, csrf))}</tbody>
</table></div>
<h2 id="h-add">${t('op_add_title')}</h2>
<form method="post" action="${BASE}" class="confirm" aria-labelledby="h-add">
<input type="hidden" name="_csrf" value="${csrf}">
<label>${t('op_username')}<input name="username" maxlength="64" required autocomplete="off" autocapitalize="none" spellcheck="false"></label>
<label>${t('op_role')}${roleSelect(v, 'viewer', 'role-new')}</label>
<label>${t('op_password')}<input type="password" name="password" maxlength="1024" autocomplete="new-password"></label>
<button type="submit">${t('op_add_button')}</button>
</form>`;
}

export const consoleOperatorRoutes: RoutePlugin<
  Deps<'clock' | 'config' | 'formKeySecret' | 'logger' | 'operator' | 'store'>
> = async (app, services) => {
  const ctx = consoleContext(services);
  const page = async (req: FastifyRequest, reply: FastifyReply, o: { alert?: Alert; status?: number } = {}) => {
    const v = ctx.view(req, reply);
    const list = await listOperators(services, operatorActor(req));
    return ctx.render(reply, req, {
      title: v.t('title_operators'),
      section: 'operators',
      here: BASE,
      status: o.status,
      alert: o.alert,
      body: body(list, v, ctx.csrfToken(req, reply)),
    });
  };
  /** Runs a change; a refusal (a short password, a taken name…) is shown on the page, nothing else is. */
  const act = async (req: FastifyRequest, reply: FastifyReply, change: () => Promise<string>) => {
    try {
      const text = await change();
      return page(req, reply, { alert: { kind: 'ok', text } });
    } catch (err) {
      if (!(err instanceof AppError) || err.code === 'FORBIDDEN') throw err;
      return page(req, reply, { status: err.status, alert: errorAlert(ctx.view(req, reply), err, req.id) });
    }
  };

  app.get(
    BASE,
    {
      config: { auth: 'op' },
      schema: {
        ...consoleDoc(
          'Console: operators',
          'The operators of GET /api/operators, with forms to add, change, disable and unlock them. Admins only.',
        ),
        querystring: Type.Object({ lang: LangQuery }),
      },
    },
    async (req, reply) => page(req, reply),
  );

  app.post(
    BASE,
    {
      config: { auth: 'op' },
      preHandler: app.csrfProtection,
      schema: {
        ...consoleDoc(
          'Console form: add an operator',
          'As POST /api/operators; a generated password is shown on the answer, this once.',
        ),
        body: Type.Object({
          _csrf: Type.String({ maxLength: 512 }),
          username: Type.String({ maxLength: 200 }),
          role: RoleField,
          password: Type.Optional(Type.String({ maxLength: 1024 })),
        }),
      },
    },
    async (req, reply) =>
      act(req, reply, async () => {
        const v = ctx.view(req, reply);
        const password = req.body.password === '' ? undefined : req.body.password;
        const added = await addOperator(services, operatorActor(req), {
          username: req.body.username,
          role: req.body.role,
          password,
        });
        const user = added.operator.username;
        return added.password === undefined
          ? v.t('op_added', { user })
          : v.t('op_generated', { user, password: added.password });
      }),
  );

  app.post(
    `${BASE}/:username`,
    {
      config: { auth: 'op' },
      preHandler: app.csrfProtection,
      schema: {
        ...consoleDoc(
          'Console form: change an operator',
          'As PATCH /api/operators/{username}: a role, or disabled (ending their sessions at once).',
        ),
        params: Type.Object({ username: Name }),
        body: Type.Object({
          _csrf: Type.String({ maxLength: 512 }),
          role: Type.Optional(RoleField),
          disabled: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
        }),
      },
    },
    async (req, reply) =>
      act(req, reply, async () => {
        await changeOperator(services, operatorActor(req), req.params.username, {
          role: req.body.role,
          disabled: req.body.disabled === undefined ? undefined : req.body.disabled === 'true',
        });
        return ctx.view(req, reply).t('op_saved');
      }),
  );

  app.post(
    `${BASE}/:username/unlock`,
    {
      config: { auth: 'op' },
      preHandler: app.csrfProtection,
      schema: {
        ...consoleDoc('Console form: unlock an operator', 'As POST /api/operators/{username}/unlock.'),
        params: Type.Object({ username: Name }),
        body: Type.Object({ _csrf: Type.String({ maxLength: 512 }) }),
      },
    },
    async (req, reply) =>
      act(req, reply, async () => {
        await unlockOperator(services, operatorActor(req), req.params.username);
        return ctx.view(req, reply).t('op_saved');
      }),
  );
};
