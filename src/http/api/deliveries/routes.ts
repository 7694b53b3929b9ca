import { Type } from 'typebox';
import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { operatorActor } from '../../plugins/actor.js';
import { Count, EventId, Str, countParam } from '../../schemas/common.js';
import { withExample } from '../../schemas/examples.js';
import { DELIVERY_EXAMPLE, DeliverySchema, DeliveryStateSchema, deliveryView } from './views.js';
import { listDeliveries } from '../../../domain/queries/listing.js';
import { retryDelivery } from '../../../domain/erp-events/deliveries.js';
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

export const deliveryRoutes: RoutePlugin<Deps<'clock' | 'logger' | 'outbox' | 'store'>> = async (app, services) => {
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
