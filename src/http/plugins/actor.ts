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

/** The ERP, calling a `key` route with an API key. */
export function apiActor(req: FastifyRequest): Actor {
  return { kind: 'api', ip: req.ip };
}
