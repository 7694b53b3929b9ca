/**
 * `/test-notify-erp`: a test ERP event through the outbox, answered with its first delivery
 * attempt. Registered only with LOG_EXPOSE_API, so with the flag off it answers exactly like any
 * unknown path; operator auth still applies when it is on.
 */
import { Type } from 'typebox';
import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { operatorActor } from '../../plugins/actor.js';
import { NullableInt, NullableStr, Str } from '../../schemas/common.js';
import { problems } from '../../schemas/problems.js';
import { sendTestEvent, type TestEventReport } from '../../../domain/erp-events/test-event.js';
import { TestEventInputSchema } from '../../../erp/events.js';

const TestEventReportSchema = Type.Object({
  event_id: Str(64),
  outcome: Str(32, 'first attempt: delivered, failed, dead, rejected_stale_lease; pending = no attempt yet (no ERP URL, or none within the timeout)'),
  state: Str(16, 'delivery state: pending, delivered, failed, dead'),
  http_status: NullableInt,
  error: NullableStr(500),
  latency_ms: NullableInt,
});

function testEventView(r: TestEventReport) {
  return { event_id: r.eventId, outcome: r.outcome, state: r.state, http_status: r.httpStatus, error: r.error, latency_ms: r.latencyMs };
}

export const testEventRoutes: RoutePlugin<Deps<'clock' | 'config' | 'logger' | 'outbox' | 'settings' | 'store'>> = async (app, services) => {
  if (!services.config.exposeDevApi) return;
  app.post(
    '/test-notify-erp',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.dev],
        summary: 'Send a test ERP event (type payment.test) through the outbox and report its first delivery attempt',
        body: TestEventInputSchema,
        response: { 200: TestEventReportSchema, ...problems(400, 401) },
      },
      // The body is optional: no body at all means all defaults (Fastify would validate `undefined`).
      preValidation: async (req) => {
        if (req.body === undefined || req.body === null) req.body = {};
      },
    },
    async (req) => testEventView(await sendTestEvent(services, req.body, operatorActor(req))),
  );
};
