import type { FastifyRequest } from 'fastify';
import type { Actor } from '../../domain/audit.js';
import { operatorActorOf } from '../../domain/operators/identity.js';

/**
 * The signed-in operator of an `op` route (the auth hook has set who it is before any handler
 * runs); should it not have, a nameless viewer, allowed nothing that changes anything.
 */
export function operatorActor(req: FastifyRequest): Actor {
  return operatorActorOf(req.operatorIdentity ?? { username: 'operator', role: 'viewer', accounts: null }, req.ip);
}

/** The ERP, calling a `key` route with an API key of its account. */
export function apiActor(req: FastifyRequest): Actor {
  return { kind: 'api', account: requestAccount(req), ip: req.ip };
}

/** The account of a `key` route's request (the auth hook has set it before any handler runs). */
export function requestAccount(req: FastifyRequest): string {
  if (req.account === undefined) throw new Error(`no account on ${req.routeOptions.url ?? 'this route'}`);
  return req.account;
}
