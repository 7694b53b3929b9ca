import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyPluginOptions,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/**
 * The routes of one resource: a Fastify plugin (a scope of its own) whose options are the
 * dependencies it uses (`Deps<…>`), so it names them and a test can give it only those.
 */
export type RoutePlugin<Options extends FastifyPluginOptions = Record<never, never>> =
  FastifyPluginAsyncTypebox<Options>;

/** A route plugin with its options, ready to be registered: an entry of app.ts's table. */
export type Mount = (app: App) => Promise<void>;

/**
 * Who may call a route: `key` = API key when API_KEYS is set; `op` = operator Basic Auth;
 * `doc` = the description and its rendered reference: operator Basic Auth or, when API_KEYS is
 * set, an API key (the ERP developer reads what they build against);
 * `sig` = gateway signature (checked by the handler); `none` = public.
 * Every route declares one in `config.auth`; a route without it is refused at start-up.
 */
export type RouteAuth = 'key' | 'op' | 'doc' | 'sig' | 'none';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
    /** Body strings reach the handler even with a NUL in them (the handler deals with it); see nul-guard.ts. */
    rawStrings?: boolean;
  }
  interface FastifyRequest {
    /** The operator's user name once Basic Auth succeeded. */
    operatorUser?: string;
    /** The account an API key acts for, once a `key` route's key was accepted (`default` when no keys are configured). */
    account?: string;
  }
}

/** The endpoint groups, used as OpenAPI tags. */
export const TAGS = {
  health: 'Health & Config',
  links: 'Payment Links',
  ops: 'Payment Operations',
  webhook: 'Webhook',
  logs: 'Logs & Docs',
  dev: 'Dev/Test',
  operations: 'Operations',
  accounts: 'Accounts',
} as const;
