/**
 * A test event for the ERP (`type: payment.test`, `test: true`): written to the outbox like any
 * event, so it takes the real path (signing, delivery, retries), and its first attempt is reported.
 */
import { eventAccount } from '../accounts/events.js';
import { randomUUID } from 'node:crypto';
import type { Deps } from '../../types.js';
import type { AttemptOutcome, OutboxState } from '../../model/delivery.js';
import { TEST_EVENT, testEvent, type TestEventInput } from '../../erp/events.js';
import { actorName, audit, type Actor } from '../audit.js';
import { currentTraceparent } from '../../platform/tracing.js';
import { requireRole } from '../operators/access.js';

export interface TestEventReport {
  eventId: string;
  /** The first attempt's outcome; `pending` when there was none (no ERP URL, or none within the ERP timeout). */
  outcome: AttemptOutcome | 'pending';
  state: OutboxState;
  httpStatus: number | null;
  /** What went wrong, or why nothing was attempted; null after a delivery. */
  error: string | null;
  latencyMs: number | null;
}

/** How much longer than the ERP timeout the first attempt is waited for (claiming and recording it). */
const WAIT_MARGIN_MS = 2_000;

export async function sendTestEvent(
  services: Deps<'clock' | 'logger' | 'outbox' | 'runtimeConfig' | 'store'>,
  input: TestEventInput,
  actor: Actor,
): Promise<TestEventReport> {
  requireRole(actor, 'finance');
  const s = await services.runtimeConfig.current();
  const eventId = randomUUID();
  const account = await eventAccount(services.store, services.store.account);
  const payload = { ...testEvent(input, eventId, services.clock.now()), ...(account === undefined ? {} : { account }) };
  const ev = await services.store.outbox.enqueue(
    {
      eventId,
      eventType: TEST_EVENT,
      orderKey: `test:${eventId}`,
      orderId: payload.order_id,
      mercantId: payload.mercant_id,
      statusVersion: null,
      payload: JSON.stringify(payload),
      traceContext: currentTraceparent() ?? null,
    },
    services.clock.now(),
  );
  services.outbox.wake();
  const outcome = s.erp.notify_url
    ? await services.outbox.waitForAttempt(ev.seq, 0, s.erp.timeout_ms + WAIT_MARGIN_MS)
    : undefined;
  const after = await services.store.outbox.findByEventId(eventId);
  const first = (await services.store.outbox.attemptsFor([ev.seq]))[0];
  const report: TestEventReport = {
    eventId,
    outcome: outcome ?? 'pending',
    state: after?.state ?? 'pending',
    httpStatus: first?.statusCode ?? null,
    error: first
      ? first.error
      : s.erp.notify_url
        ? 'no attempt within the ERP timeout'
        : 'erp.notify_url is not set: the event waits in the outbox',
    latencyMs: first?.latencyMs ?? null,
  };
  audit(
    services,
    { actor, action: 'test_event_send', subject: payload.order_id, outcome: report.outcome },
    `${actorName(actor)} sent a test event to the ERP`,
    { event_id: eventId },
  );
  return report;
}
