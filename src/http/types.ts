import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';

export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

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
} as const;
