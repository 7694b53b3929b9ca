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
import { withExample } from '../../schemas/examples.js';
import { sendTestEvent, type TestEventReport } from '../../../domain/erp-events/test-event.js';
import { TestEventInputSchema } from '../../../erp/events.js';
import { DEV_ONLY } from '../dev/routes.js';

const TestEventReportSchema = Type.Object({
  event_id: Str(64),
  outcome: Str(
    32,
    'first attempt: delivered, failed, dead, rejected_stale_lease; pending = no attempt yet (no ERP URL, or none within the timeout)',
  ),
  state: Str(16, 'delivery state: pending, delivered, failed, dead'),
  http_status: NullableInt,
  error: NullableStr(500),
  latency_ms: NullableInt,
});

function testEventView(r: TestEventReport) {
  return {
    event_id: r.eventId,
    outcome: r.outcome,
    state: r.state,
    http_status: r.httpStatus,
    error: r.error,
    latency_ms: r.latencyMs,
  };
}

export const testEventRoutes: RoutePlugin<
  Deps<'clock' | 'config' | 'logger' | 'outbox' | 'runtimeConfig' | 'store'>
> = async (app, services) => {
  if (!services.config.exposeDevApi) return;
  app.post(
    '/test-notify-erp',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.dev],
        summary: 'Send a test ERP event (type payment.test) through the outbox and report its first delivery attempt',
        description:
          `${DEV_ONLY} Writes a \`payment.test\` event (\`test: true\`, \`gross_amount\` 0, \`status_version\` 0) into the ERP outbox, signed and delivered like every event, ` +
          "waits for its first delivery attempt (at most the ERP timeout + 2 s) and answers how it went: `outcome`, the delivery `state`, the ERP's HTTP status, the error and the latency. " +
          "Use it to check the ERP URL, the signing secret and the receiver's verification before going live; the receiver should check `type` and acknowledge test events without applying them. " +
          'A test event never says `paid` (the status defaults to `pending`; `paid` is refused), so even a receiver that looks only at `status` cannot book it as a payment. ' +
          'Without `erp.notify_url` the event waits in the outbox and the answer says so (`pending`). Every field of the body is optional.',
        body: withExample(TestEventInputSchema, {
          mercant_id: 'INV/2026/0042',
          order_id: 'INV/2026/0042:1',
          status: 'expired',
        }),
        response: {
          200: withExample(TestEventReportSchema, {
            event_id: '0b6f8f0e-64a4-4f7c-9d1a-6a0f3c2b9e11',
            outcome: 'delivered',
            state: 'delivered',
            http_status: 204,
            error: null,
            latency_ms: 38,
          }),
          ...problems(400, 401, 403),
        },
      },
      // The body is optional: no body at all means all defaults (Fastify would validate `undefined`).
      preValidation: async (req) => {
        if (req.body === undefined || req.body === null) req.body = {};
      },
    },
    async (req) => testEventView(await sendTestEvent(services, req.body, operatorActor(req))),
  );
};
