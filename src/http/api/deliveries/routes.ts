import { Type } from 'typebox';
import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { operatorActor } from '../../plugins/actor.js';
import { Count, EventId, Str, countParam } from '../../schemas/common.js';
import { DeliverySchema, DeliveryStateSchema, deliveryView } from './views.js';
import { listDeliveries } from '../../../domain/queries/listing.js';
import { retryDelivery } from '../../../domain/erp-events/deliveries.js';
import { problems } from '../../schemas/problems.js';

const ListQuery = Type.Object(
  {
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
        querystring: ListQuery,
        response: { 200: Type.Object({ items: Type.Array(DeliverySchema, { maxItems: 500 }), next_cursor: Type.Optional(Str(200)) }), ...problems(400, 401) },
      },
    },
    async (req) => {
      const { page, attempts } = await listDeliveries(services, { state: req.query.status, limit: countParam('limit', req.query.limit, 50, 500), cursor: req.query.cursor });
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
        params: Type.Object({ id: EventId }, { additionalProperties: false }),
        response: { 200: DeliverySchema, ...problems(400, 401, 404) },
      },
    },
    async (req) => {
      const { event, attempts } = await retryDelivery(services, req.params.id, operatorActor(req));
      return deliveryView(event, attempts);
    },
  );
};
