import { Type } from 'typebox';
import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { operatorActor } from '../../plugins/actor.js';
import { Count, EventId, Str, countParam } from '../../schemas/common.js';
import { withExample } from '../../schemas/examples.js';
import { DELIVERY_EXAMPLE, DeliverySchema, DeliveryStateSchema, deliveryView } from './views.js';
import { listDeliveries } from '../../../domain/queries/listing.js';
import { retryDelivery } from '../../../domain/erp-events/deliveries.js';
import { REPLAY_MAX, replayDeliveries } from '../../../domain/erp-events/replay.js';
import { problems } from '../../schemas/problems.js';
import { AccountIdSchema } from '../../../domain/accounts/accounts.js';

const ListQuery = Type.Object(
  {
    account: Type.Optional(AccountIdSchema),
    status: Type.Optional(DeliveryStateSchema),
    limit: Type.Optional(Count('1..500, default 50')),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

const ReplayBody = Type.Object(
  {
    since: Type.String({ minLength: 1, maxLength: 40, description: 'ISO 8601 date-time with an offset (inclusive)' }),
    until: Type.Optional(
      Type.String({ minLength: 1, maxLength: 40, description: 'ISO 8601 date-time with an offset (exclusive)' }),
    ),
    order_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    status: Type.Optional(DeliveryStateSchema),
    account: Type.Optional(AccountIdSchema),
    dry_run: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const deliveryRoutes: RoutePlugin<Deps<'clock' | 'logger' | 'outbox' | 'runtimeConfig' | 'store'>> = async (
  app,
  services,
) => {
  app.get(
    '/api/deliveries',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.operations],
        summary: 'ERP deliveries (newest first) with their attempts; filter by status, page with the cursor',
        description:
          'The ERP outbox: every event with its state (`pending`, `delivered`, `failed`, `dead`), the exact body delivered and each attempt with its status code and latency. Filter by `account` (all accounts when absent) and `status`; page with `cursor`.',
        querystring: ListQuery,
        response: {
          200: withExample(
            Type.Object({ items: Type.Array(DeliverySchema, { maxItems: 500 }), next_cursor: Type.Optional(Str(200)) }),
            { items: [DELIVERY_EXAMPLE], next_cursor: 'eyJzIjoxMjN9' },
          ),
          ...problems(400, 401),
        },
      },
    },
    async (req) => {
      const { page, attempts } = await listDeliveries(
        services,
        {
          account: req.query.account,
          state: req.query.status,
          limit: countParam('limit', req.query.limit, 50, 500),
          cursor: req.query.cursor,
        },
        operatorActor(req),
      );
      const items = page.items.map((e) => deliveryView(e, attempts));
      return page.nextCursor ? { items, next_cursor: page.nextCursor } : { items };
    },
  );

  app.post(
    '/api/deliveries/replay',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.operations],
        summary: 'Re-deliver every ERP event of a time window (same event ids); dry_run only counts',
        description: `Makes every ERP event written in [\`since\`, \`until\`) due again under its own event id (its \`webhook-id\`), narrowed to one \`order_id\`, one delivery \`status\` or one \`account\` when given; oldest first, at most ${REPLAY_MAX} per call. \`dry_run: true\` changes nothing and answers what would be replayed. Needs the finance or admin role; one audit line names the operator.`,
        body: ReplayBody,
        response: {
          200: withExample(
            Type.Object({
              count: Type.Integer({ minimum: 0 }),
              event_ids: Type.Array(Type.String(), { maxItems: REPLAY_MAX }),
            }),
            { count: 2, event_ids: ['5b6f9a7e-2c1d-4e8f-9a0b-1c2d3e4f5a6b', '0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6'] },
          ),
          ...problems(400, 401, 403),
        },
      },
    },
    async (req) => {
      const b = req.body;
      const out = await replayDeliveries(
        services,
        {
          since: b.since,
          until: b.until,
          orderId: b.order_id,
          state: b.status,
          account: b.account,
          dryRun: b.dry_run,
        },
        operatorActor(req),
      );
      return { count: out.count, event_ids: out.eventIds };
    },
  );

  app.post(
    '/api/deliveries/:id/retry',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.operations],
        summary: 'Re-deliver one event now (same event id and body); a dead or delivered event gets a new retry window',
        description:
          "Makes one event due now with the same event id and body (the ERP deduplicates on `webhook-id`). A dead event gets a new retry window. Written to the audit log with the operator's name.",
        params: Type.Object({ id: EventId }, { additionalProperties: false }),
        response: {
          200: withExample(DeliverySchema, {
            ...DELIVERY_EXAMPLE,
            status: 'pending',
            next_attempt_at: '2026-11-22T11:00:00+07:00',
          }),
          ...problems(400, 401, 403, 404),
        },
      },
    },
    async (req) => {
      const { event, attempts } = await retryDelivery(services, req.params.id, operatorActor(req));
      return deliveryView(event, attempts);
    },
  );
};
