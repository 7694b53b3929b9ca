import { Type } from 'typebox';
import { inAccount } from '../../../domain/accounts/scope.js';
import { requestAccount } from '../../plugins/actor.js';
import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { Count, boundedParam, countParam } from '../../schemas/common.js';
import { ErpEventSchema } from '../../../erp/events.js';
import { ERP_EVENT_EXAMPLE, withExample } from '../../schemas/examples.js';
import {
  FEED_MAX_LIMIT,
  FEED_MAX_WAIT_S,
  acknowledgeErpEvents,
  pullErpEvents,
} from '../../../domain/erp-events/feed.js';
import { problems } from '../../schemas/problems.js';

const Cursor = Type.String({ minLength: 1, maxLength: 300, description: 'A cursor this feed handed out (opaque)' });

const FeedQuery = Type.Object(
  {
    after: Type.Optional(Cursor),
    limit: Type.Optional(Count(`1..${FEED_MAX_LIMIT} events per page (default 100)`)),
    wait: Type.Optional(
      Count(`Seconds (0..${FEED_MAX_WAIT_S}) to wait for a first event when none is there yet (default 0)`, 3),
    ),
  },
  { additionalProperties: false },
);

// Documented as the page it is; sent as the JSON text built from the stored bodies.
const FEED_CURSOR_EXAMPLE = 'YTUyMzQzMjJjZTllM2JiYjRjN2NkMzU4ODdkNzJiZDIuMTI.0xWfweuRGPK8YtYM6uJYZc';
const FeedPageSchema = Type.Unsafe<string>(
  withExample(
    Type.Object({
      data: Type.Array(Type.Object({ cursor: Cursor, event: ErpEventSchema }), { maxItems: FEED_MAX_LIMIT }),
      next_cursor: Cursor,
    }),
    { data: [{ cursor: FEED_CURSOR_EXAMPLE, event: ERP_EVENT_EXAMPLE }], next_cursor: FEED_CURSOR_EXAMPLE },
  ),
);

const feedDescription =
  'For an ERP that cannot receive webhooks: the ERP events in one sequence (per order strictly in order), each `event` byte for byte the body a push carries. ' +
  'Start without `after`; then pass `next_cursor`. With `wait`, an empty feed answers when a first event arrives or the time is up. ' +
  'Two pullers with the same key see the same sequence. Acknowledge what was processed with `POST /api/erp-events/ack`. A cursor of another database, or an altered one, is 400. ' +
  'A waiting pull is answered at once, with no events and the cursor given, when the service shuts down.';

export const erpEventRoutes: RoutePlugin<Deps<'clock' | 'feed' | 'logger' | 'store'>> = async (app, services) => {
  // A pull waiting for events would hold the close up until its wait ends (and the process's own
  // deadline would cut it off first): shutting down answers it at once instead. One controller per
  // pull, dropped when it ends, so nothing accumulates on a signal that lives as long as the app.
  const pulls = new Set<AbortController>();
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    for (const p of pulls) p.abort();
  });
  app.get(
    '/api/erp-events',
    {
      config: { auth: 'key' },
      schema: {
        tags: [TAGS.ops],
        summary: 'Pull the ERP events (for ERPs that cannot receive webhooks)',
        description: feedDescription,
        querystring: FeedQuery,
        response: { 200: FeedPageSchema, ...problems(400, 401) },
      },
    },
    async (req, reply) => {
      const stop = new AbortController();
      req.raw.once('close', () => stop.abort());
      if (closing) stop.abort();
      const limit = countParam('limit', req.query.limit, 100, FEED_MAX_LIMIT);
      const waitS = boundedParam('wait', req.query.wait, 0, 0, FEED_MAX_WAIT_S);
      pulls.add(stop);
      const page = await pullErpEvents(
        inAccount(services, requestAccount(req)),
        { after: req.query.after, limit, waitS },
        stop.signal,
      ).finally(() => pulls.delete(stop));
      if (closing) reply.header('connection', 'close');
      // The stored bodies go out as they are: re-serialising would not be byte for byte.
      const data = page.data.map((d) => `{"cursor":${JSON.stringify(d.cursor)},"event":${d.payload}}`).join(',');
      return reply
        .type('application/json; charset=utf-8')
        .send(`{"data":[${data}],"next_cursor":${JSON.stringify(page.nextCursor)}}`);
    },
  );

  app.post(
    '/api/erp-events/ack',
    {
      config: { auth: 'key' },
      schema: {
        tags: [TAGS.ops],
        summary: 'Acknowledge the pulled ERP events up to a cursor',
        description:
          'Every event up to `cursor` that a pull handed out counts as delivered: the push outbox stops retrying it. Acknowledging an event already pushed (or acknowledged) changes nothing. `acked` is how many were not delivered before. ' +
          'A cursor later than anything this feed could have handed out is 400.',
        body: Type.Object({ cursor: Cursor }, { additionalProperties: false }),
        response: {
          200: withExample(Type.Object({ acked: Type.Integer({ minimum: 0 }) }), { acked: 12 }),
          ...problems(400, 401),
        },
      },
    },
    async (req) => ({
      acked: await acknowledgeErpEvents(inAccount(services, requestAccount(req)), req.body.cursor, 'erp-feed'),
    }),
  );
};
