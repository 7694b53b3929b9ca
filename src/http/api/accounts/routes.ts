import { Type } from 'typebox';
import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { operatorActor } from '../../plugins/actor.js';
import { NoQuery } from '../../schemas/common.js';
import { withExample } from '../../schemas/examples.js';
import { problems } from '../../schemas/problems.js';
import { CONFIG_EXAMPLE, ConfigDocumentSchema, configView } from '../config/views.js';
import { RuntimeConfigPatchSchema } from '../../../domain/runtime-config.js';
import {
  AccountIdSchema,
  NewAccountSchema,
  accountConfig,
  changeAccountConfig,
  createAccount,
  disableAccount,
  listAccounts,
} from '../../../domain/accounts/accounts.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../../../domain/accounts/api-keys.js';
import {
  ACCOUNT_EXAMPLE,
  API_KEY_EXAMPLE,
  AccountListSchema,
  AccountViewSchema,
  ApiKeyListSchema,
  NewApiKeyViewSchema,
  accountView,
  apiKeyView,
} from './views.js';

const AccountParams = Type.Object({ id: AccountIdSchema }, { additionalProperties: false });
const KeyParams = Type.Object(
  { id: AccountIdSchema, key_id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }) },
  { additionalProperties: false },
);
const ConfigAnswer = withExample(ConfigDocumentSchema, {
  ...CONFIG_EXAMPLE,
  gateway: { ...CONFIG_EXAMPLE.gateway, merchant_id: 'G123456789' },
});
const NewKeyBody = Type.Object(
  { label: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) },
  { additionalProperties: false },
);

/**
 * `/api/accounts`: the merchants this service serves. Each has the `/api/config` document of its
 * own (plus `gateway.merchant_id`), its API keys, and its payments; `default` is the environment's.
 */
export const accountRoutes: RoutePlugin<
  Deps<'clock' | 'config' | 'logger' | 'runtimeConfig' | 'store' | 'version'>
> = async (app, services) => {
  const summary = async (id: string) => {
    const all = await listAccounts(services);
    const a = all.find((x) => x.id === id);
    if (!a) throw new Error(`account ${id} vanished`);
    return accountView(a);
  };

  app.get(
    '/api/accounts',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.accounts],
        summary: 'List the accounts',
        description:
          'Every account (one Midtrans merchant each) the operator may see, disabled ones included, oldest first.',
        querystring: NoQuery,
        response: { 200: withExample(AccountListSchema, { data: [ACCOUNT_EXAMPLE] }), ...problems(401) },
      },
    },
    async (req) => ({ data: (await listAccounts(services, operatorActor(req))).map(accountView) }),
  );

  app.post(
    '/api/accounts',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.accounts],
        summary: 'Create an account',
        description:
          '`config` is the runtime configuration document of `/api/config` (any subset, same rules), with `gateway.merchant_id`; secrets are write-only. An id in use (a disabled account too) → 409 `ACCOUNT_EXISTS`. Its notification URL is `PUBLIC_BASE_URL/webhook/midtrans/{id}`.',
        body: withExample(NewAccountSchema, {
          id: 'toko-b',
          name: 'Toko B',
          config: {
            gateway: { mode: 'sandbox', merchant_id: 'G123456789', server_key: 'SB-Mid-server-…' },
            erp: { notify_url: 'https://erp-b.example.com/paylink/events', webhook_secret: 'whsec_…' },
          },
        }),
        response: { 201: withExample(AccountViewSchema, ACCOUNT_EXAMPLE), ...problems(400, 401, 409) },
      },
    },
    async (req, reply) => {
      const a = await createAccount(services, req.body, operatorActor(req));
      return reply.code(201).send(await summary(a.id));
    },
  );

  app.delete(
    '/api/accounts/:id',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.accounts],
        summary: 'Disable an account',
        description:
          'Its history is kept; its API keys and its notifications are refused from then on. `default` cannot be disabled (409 `ACCOUNT_DEFAULT`).',
        params: AccountParams,
        response: {
          200: withExample(AccountViewSchema, { ...ACCOUNT_EXAMPLE, disabled: true }),
          ...problems(401, 404, 409),
        },
      },
    },
    async (req) => {
      await disableAccount(services, req.params.id, operatorActor(req));
      return summary(req.params.id);
    },
  );

  app.get(
    '/api/accounts/:id/config',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.accounts],
        summary: "An account's runtime configuration",
        description: 'The document and rules of `/api/config`, for this account; secrets shown as `****` + last 4.',
        params: AccountParams,
        querystring: NoQuery,
        response: { 200: ConfigAnswer, ...problems(401, 404) },
      },
    },
    async (req) => configView(await accountConfig(services, req.params.id, operatorActor(req)), services),
  );

  app.post(
    '/api/accounts/:id/config',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.accounts],
        summary: "Change an account's runtime configuration",
        description:
          'As `POST /api/config`, for this account: sections merge, `null` removes an override, a masked secret sent back leaves it unchanged.',
        params: AccountParams,
        body: withExample(RuntimeConfigPatchSchema, { gateway: { merchant_id: 'G123456789' } }),
        response: { 200: ConfigAnswer, ...problems(400, 401, 404, 409) },
      },
    },
    async (req) =>
      configView(await changeAccountConfig(services, req.params.id, req.body, operatorActor(req)), services),
  );

  app.post(
    '/api/accounts/:id/api-keys',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.accounts],
        summary: 'Create an API key',
        description:
          'The key acts for this account on every ERP-facing endpoint. It is shown in this answer only and kept as a hash.',
        params: AccountParams,
        body: withExample(NewKeyBody, { label: 'ERP production' }),
        response: {
          201: withExample(NewApiKeyViewSchema, {
            key_id: API_KEY_EXAMPLE.key_id,
            key: 'pl_…',
            label: API_KEY_EXAMPLE.label,
            created_at: API_KEY_EXAMPLE.created_at,
          }),
          ...problems(400, 401, 404),
        },
      },
      // No body at all is a key without a label.
      preValidation: async (req) => {
        req.body ??= {};
      },
    },
    async (req, reply) => {
      const k = await createApiKey(services, req.params.id, req.body.label, operatorActor(req));
      const { last_used_at: _unused, ...view } = apiKeyView(k);
      return reply.code(201).send({ ...view, key: k.key });
    },
  );

  app.get(
    '/api/accounts/:id/api-keys',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.accounts],
        summary: "An account's API keys",
        description: 'The keys in force (never the key itself).',
        params: AccountParams,
        querystring: NoQuery,
        response: { 200: withExample(ApiKeyListSchema, { data: [API_KEY_EXAMPLE] }), ...problems(401, 404) },
      },
    },
    async (req) => ({ data: (await listApiKeys(services, req.params.id, operatorActor(req))).map(apiKeyView) }),
  );

  app.delete(
    '/api/accounts/:id/api-keys/:key_id',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.accounts],
        summary: 'Revoke an API key',
        description: 'Refused at once, on every instance (each request looks its key up).',
        params: KeyParams,
        response: { 204: Type.Null(), ...problems(401, 404) },
      },
    },
    async (req, reply) => {
      await revokeApiKey(services, req.params.id, req.params.key_id, operatorActor(req));
      return reply.code(204).send(null);
    },
  );
};
