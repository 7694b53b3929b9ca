import type { FastifyRequest } from 'fastify';
import type { Actor } from '../../domain/audit.js';

/** The signed-in operator of an `op` route (the auth hook has set the name before any handler runs). */
export function operatorActor(req: FastifyRequest): Actor {
  return { kind: 'operator', user: req.operatorUser ?? 'operator', ip: req.ip };
}

/** The ERP, calling a `key` route with an API key. */
export function apiActor(req: FastifyRequest): Actor {
  return { kind: 'api', ip: req.ip };
}
