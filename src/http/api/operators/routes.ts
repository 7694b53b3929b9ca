/** Operators: admins manage them; every operator reads who they are. */
import { Type } from 'typebox';
import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { operatorActor } from '../../plugins/actor.js';
import { withExample } from '../../schemas/examples.js';
import { NoQuery } from '../../schemas/common.js';
import { problems } from '../../schemas/problems.js';
import { AppError } from '../../../platform/errors.js';
import { apiTime, apiTimeOrNull } from '../../../platform/time.js';
import {
  addOperator,
  changeOperator,
  listOperators,
  unlockOperator,
  type OperatorView,
} from '../../../domain/operators/manage.js';
import {
  AddedOperatorSchema,
  AddOperatorBody,
  ChangeOperatorBody,
  MeSchema,
  OPERATOR_EXAMPLE,
  OperatorSchema,
  UsernameParams,
} from './schemas.js';

const ADMIN_ONLY = 'Admins only (403 `FORBIDDEN` for other roles).';

function operatorView(o: OperatorView): OperatorView {
  return {
    ...o,
    created_at: apiTime(o.created_at),
    last_sign_in_at: apiTimeOrNull(o.last_sign_in_at),
    locked_until: apiTimeOrNull(o.locked_until),
  };
}

export const operatorRoutes: RoutePlugin<Deps<'clock' | 'logger' | 'operator' | 'store'>> = async (app, services) => {
  app.get(
    '/api/operators',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.operations],
        summary: 'The operators who sign in by name, with their roles',
        description: `Every stored operator (the operator of \`log_user\` is not listed: it is an admin of the environment). ${ADMIN_ONLY}`,
        querystring: NoQuery,
        response: {
          200: withExample(Type.Object({ data: Type.Array(OperatorSchema) }), { data: [OPERATOR_EXAMPLE] }),
          ...problems(400, 401, 403),
        },
      },
    },
    async (req) => ({ data: (await listOperators(services, operatorActor(req))).map(operatorView) }),
  );

  app.post(
    '/api/operators',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.operations],
        summary: 'Add an operator',
        description: `Without \`password\`, one is generated and answered this once. A taken username (or that of \`log_user\`) is 409 \`OPERATOR_EXISTS\`. ${ADMIN_ONLY}`,
        body: withExample(AddOperatorBody, { username: 'ani', role: 'finance' }),
        response: {
          201: withExample(AddedOperatorSchema, { ...OPERATOR_EXAMPLE, password: 'Qm9vdHN0cmFwLXBhc3N3b3Jk' }),
          ...problems(400, 401, 403, 409),
        },
      },
    },
    async (req, reply) => {
      const added = await addOperator(services, operatorActor(req), req.body);
      return reply.code(201).send({
        ...operatorView(added.operator),
        ...(added.password === undefined ? {} : { password: added.password }),
      });
    },
  );

  app.patch(
    '/api/operators/:username',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.operations],
        summary: 'Change the role, accounts or password of an operator, or disable them',
        description: `Disabling (or a new password) ends every session of the operator at once, on every instance; their Basic credentials are refused from the next request. ${ADMIN_ONLY}`,
        params: UsernameParams,
        body: withExample(ChangeOperatorBody, { role: 'viewer' }),
        response: { 200: withExample(OperatorSchema, OPERATOR_EXAMPLE), ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => operatorView(await changeOperator(services, operatorActor(req), req.params.username, req.body)),
  );

  app.post(
    '/api/operators/:username/unlock',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.operations],
        summary: 'Lift the sign-in lock of an operator',
        description: `Forgets the failed sign-ins of the name from every address. ${ADMIN_ONLY}`,
        params: UsernameParams,
        response: {
          200: withExample(Type.Object({ username: Type.String(), locked_until: Type.Null() }), {
            username: 'ani',
            locked_until: null,
          }),
          ...problems(400, 401, 403, 404),
        },
      },
    },
    async (req) => {
      await unlockOperator(services, operatorActor(req), req.params.username);
      return { username: req.params.username, locked_until: null };
    },
  );

  app.get(
    '/api/me',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.operations],
        summary: 'The signed-in operator: name, role and accounts',
        querystring: NoQuery,
        response: {
          200: withExample(MeSchema, { username: 'ani', role: 'finance', accounts: null }),
          ...problems(400, 401),
        },
      },
    },
    async (req) => {
      const me = req.operatorIdentity;
      if (!me) throw new AppError('UNAUTHORIZED');
      return { username: me.username, role: me.role, accounts: me.accounts };
    },
  );
};
