import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../types.js';
import type { Html } from './html.js';
import type { Alert, Section } from './layout.js';

/** Console pages are HTML for people; they are listed in the API description so every route is, without request schemas. */
export const consoleDoc = (summary: string, description: string) => ({ tags: ['Operations'], summary, description, produces: ['text/html'] });

export interface ConsoleContext {
  services: Services;
  timeZone: string;
  render(reply: FastifyReply, req: FastifyRequest, o: { title: string; section: Section; body: Html; alert?: Alert; status?: number }): FastifyReply;
  /** A CSRF token for the forms of this answer, bound to the signed-in operator and valid for `CSRF_VALIDITY_MS`. */
  csrfToken(req: FastifyRequest, reply: FastifyReply): string;
}

/** How long a console form stays usable: a working day, so a token that leaks does not stay good. */
export const CSRF_VALIDITY_MS = 12 * 60 * 60 * 1000;

export const DONE_MESSAGES: Record<string, string> = {
  check: 'Asked the gateway; the status below is its answer.',
  refund: 'Refund accepted by the gateway.',
  cancel: 'Cancelled at the gateway.',
  expire: 'Expired at the gateway.',
  'retry-deliveries': 'Undelivered events of this order are due again now.',
  retry: 'The event is due again now.',
};
