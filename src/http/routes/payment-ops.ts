import { Type } from 'typebox';
import type { App } from '../types.js';
import { OrderIdParams, TAGS } from '../types.js';
import type { Services } from '../../types.js';
import { ProblemSchema } from '../../errors.js';
import { idempotent } from '../idempotency.js';
import { CustomerSchema, ItemSchema } from './payment-links.js';
import { ChargeViewSchema, SnapViewSchema, StatusViewSchema, statusView } from '../../domain/payment-view.js';
import { createCharge, createSnapToken, paymentStatus } from '../../domain/payments.js';
import { PAYMENT_TYPES } from '../../gateway/charge-body.js';

const Text = (maxLength: number, description?: string) => Type.String({ maxLength, ...(description ? { description } : {}) });
const Lit = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));

const common = {
  order_id: Text(255, 'The caller\'s id; at most 50 characters after sanitizing.'),
  nominal: Type.Union([Type.Number(), Text(32)], { description: 'Positive whole rupiah; a string of digits is accepted.' }),
  customer: Type.Optional(CustomerSchema),
  items: Type.Optional(Type.Array(ItemSchema, { minItems: 1, maxItems: 100, description: 'Σ price × quantity must equal nominal.' })),
  expire_at: Type.Optional(Text(64, 'ISO 8601 with offset, or "YYYY-MM-DD HH:mm:ss" in Jakarta time.')),
};

const ChargeBody = Type.Object(
  {
    ...common,
    payment_type: Lit(PAYMENT_TYPES),
    bank_transfer: Type.Optional(Type.Object({ bank: Lit(['bca', 'bni', 'bri', 'permata', 'cimb'] as const), va_number: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$', maxLength: 18 })) }, { additionalProperties: false })),
    echannel: Type.Optional(Type.Object({ bill_info1: Type.Optional(Text(10)), bill_info2: Type.Optional(Text(30)) }, { additionalProperties: false })),
    qris: Type.Optional(Type.Object({ acquirer: Type.Optional(Lit(['gopay', 'airpay shopee'] as const)) }, { additionalProperties: false })),
    gopay: Type.Optional(Type.Object({ enable_callback: Type.Optional(Type.Boolean()), callback_url: Type.Optional(Text(255)) }, { additionalProperties: false })),
    cstore: Type.Optional(Type.Object({ store: Lit(['alfamart', 'indomaret'] as const), message: Type.Optional(Text(40)) }, { additionalProperties: false })),
    shopeepay: Type.Optional(Type.Object({ callback_url: Type.Optional(Text(255)) }, { additionalProperties: false })),
    credit_card: Type.Optional(
      Type.Object(
        {
          token_id: Type.String({ minLength: 1, maxLength: 255, description: 'From the gateway\'s GET /v2/token (browser side).' }),
          authentication: Type.Optional(Type.Boolean({ description: '3-D Secure: the answer is pending with the redirect_url of the 3DS page.' })),
        },
        { additionalProperties: false },
      ),
    ),
    cimb_clicks: Type.Optional(Type.Object({ description: Type.Optional(Text(100)) }, { additionalProperties: false })),
    uob_ezpay: Type.Optional(Type.Object({ callback_url: Type.Optional(Text(255)) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

const SnapBody = Type.Object(
  { ...common, enabled_payments: Type.Optional(Type.Array(Text(32), { maxItems: 30, description: 'Default: the configured links.enabled_payments, else every method.' })) },
  { additionalProperties: false },
);

const IdemHeaders = Type.Object({ 'idempotency-key': Type.Optional(Text(255, 'Replays the first response for 24 h.')) });
const errors = { 400: ProblemSchema, 401: ProblemSchema, 409: ProblemSchema, 422: ProblemSchema, 502: ProblemSchema, 503: ProblemSchema, 504: ProblemSchema };

export async function paymentOpsRoutes(app: App, services: Services): Promise<void> {
  app.post(
    '/api/charge',
    {
      ...idempotent(services, 'charge'),
      config: { auth: 'key' },
      schema: {
        tags: [TAGS.ops],
        summary: 'Charge through the Core API',
        description: 'payment_type plus its method object. Same order_id and body again → 200 with the stored answer; a different body → 409.',
        headers: IdemHeaders,
        body: ChargeBody,
        response: { 200: ChargeViewSchema, 201: ChargeViewSchema, ...errors },
      },
    },
    async (req, reply) => {
      const { created, view } = await createCharge(services, req.body);
      return reply.code(created ? 201 : 200).send(view);
    },
  );

  app.post(
    '/api/snap/token',
    {
      ...idempotent(services, 'snap'),
      config: { auth: 'key' },
      schema: {
        tags: [TAGS.ops],
        summary: 'Create a payment-page (Snap) token',
        headers: IdemHeaders,
        body: SnapBody,
        response: { 200: SnapViewSchema, 201: SnapViewSchema, ...errors },
      },
    },
    async (req, reply) => {
      const { created, view } = await createSnapToken(services, req.body);
      return reply.code(created ? 201 : 200).send(view);
    },
  );

  app.get(
    '/api/payments/:order_id/status',
    {
      config: { auth: 'key' },
      schema: {
        tags: [TAGS.ops],
        summary: 'Ask the gateway, update the local record, return the status (by order_id, gateway_order_id or the gateway transaction_id)',
        params: OrderIdParams,
        response: { 200: StatusViewSchema, 401: ProblemSchema, 404: ProblemSchema, 502: ProblemSchema, 503: ProblemSchema, 504: ProblemSchema },
      },
    },
    async (req) => statusView(await paymentStatus(services, req.params.order_id)),
  );
}
