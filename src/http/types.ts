import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyPluginOptions,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FieldError } from '../platform/errors.js';

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
 * set, an API key (the ERP developer reads what they build against); open when API_KEYS is empty,
 * like the ERP endpoints it describes;
 * `sig` = gateway signature (checked by the handler); `none` = public.
 * Every route declares one in `config.auth`; a route without it is refused at start-up.
 */
export type RouteAuth = 'key' | 'op' | 'doc' | 'sig' | 'none';

import type { OperatorIdentity } from '../domain/operators/identity.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
    /** Body strings reach the handler even with a NUL in them (the handler deals with it); see nul-guard.ts. */
    rawStrings?: boolean;
    /**
     * An `op` route that also accepts `Authorization: Bearer <METRICS_TOKEN>` when METRICS_TOKEN is
     * set: a scraper needs no operator password, and is never counted or refused by their lockout.
     */
    metricsToken?: boolean;
    /**
     * The domain's checks of a body's fields, run when the schema refuses the body for another
     * reason, so the one answer names every problem (e.g. `orderFieldProblems`).
     */
    fieldChecks?: (body: unknown) => FieldError[];
  }
  interface FastifyRequest {
    /** The operator's user name once Basic Auth (or the console session) succeeded. */
    operatorUser?: string;
    /** The signed-in operator: name, role and the accounts they may see. */
    operatorIdentity?: OperatorIdentity;
    /** The operator signed in with the console's session cookie (not Basic Auth): the page offers a sign-out. */
    operatorSession?: boolean;
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
