/**
 * What the ERP sends, as the routes validate it and the domain functions receive it: one TypeBox
 * schema per request body, and its type. Shapes only — amounts, items, customers and expiry times
 * are judged by the domain (`order-input.ts`, `expiry.ts`), so their errors carry the right codes.
 */
import { Type, type Static } from 'typebox';
import { ChargeMethodsSchema, PaymentTypeSchema } from '../../gateway/charge-methods.js';

/** Integers may come as digit strings; the domain parses and judges them (AMOUNT_INVALID). */
const Amount = (description: string) => Type.Union([Type.Number(), Type.String({ maxLength: 32 })], { description });
const closed = { additionalProperties: false } as const;

export const CustomerInputSchema = Type.Object(
  {
    first_name: Type.Optional(Type.String({ maxLength: 255 })),
    last_name: Type.Optional(Type.String({ maxLength: 255 })),
    email: Type.Optional(Type.String({ maxLength: 255 })),
    phone: Type.Optional(Type.String({ maxLength: 64 })),
  },
  {
    additionalProperties: false,
    description: 'Trimmed; names cut to the gateway limits (50/50), e-mail ≤ 50 and phone ≤ 20 or 400.',
  },
);
export type CustomerInput = Static<typeof CustomerInputSchema>;

export const ItemInputSchema = Type.Object(
  {
    id: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Integer()])),
    name: Type.String({ maxLength: 255, description: 'Cut to 50 characters for the gateway.' }),
    price: Amount('Whole rupiah; negative for a discount line.'),
    quantity: Amount('Whole number ≥ 1.'),
  },
  closed,
);
export type ItemInput = Static<typeof ItemInputSchema>;

const ExpireAt = Type.String({
  maxLength: 64,
  description:
    'ISO 8601 with offset, or "YYYY-MM-DD HH:mm:ss" in Jakarta time (UTC+7); must lie in the future. Default from config (24 h).',
});
const LinkOrderId = Type.String({
  maxLength: 255,
  description: 'The caller\'s id; may contain ":" and "/". At most 50 characters after sanitizing.',
});

/** `POST /api/payments/:order_id/refund`: all of what is left, or a part. */
export const RefundInputSchema = Type.Object(
  {
    amount: Type.Optional(
      Type.Integer({ description: 'Whole rupiah to refund; absent = everything not refunded yet.', examples: [25000] }),
    ),
    reason: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: 'Shown at the gateway with the refund.',
        examples: ['Item out of stock'],
      }),
    ),
  },
  closed,
);
export type RefundInput = Static<typeof RefundInputSchema>;

/** `POST /api/payment-links`: one link for an amount, or for any amount the payer enters within bounds. */
export const DirectLinkInputSchema = Type.Object(
  {
    order_id: LinkOrderId,
    nominal: Type.Optional(
      Amount(
        'Positive whole rupiah; a string of digits is accepted. Required on a fixed link, refused on an open one.',
      ),
    ),
    amount_type: Type.Optional(
      Type.Union([Type.Literal('fixed'), Type.Literal('open')], {
        description:
          '"fixed" (default): the link asks for nominal. "open": the payer enters the amount on the payment page, from min_nominal to max_nominal; each purchase is a payment of its own for the amount paid.',
      }),
    ),
    min_nominal: Type.Optional(Amount('Open link only (required): the least a purchase may pay, whole rupiah ≥ 1.')),
    max_nominal: Type.Optional(
      Amount(
        "Open link only (required): the most a purchase may pay, ≥ min_nominal and within the enabled payment methods' limit.",
      ),
    ),
    preset_nominal: Type.Optional(
      Amount('Open link only (optional): the amount the payment page suggests, from min_nominal to max_nominal.'),
    ),
    customer: Type.Optional(CustomerInputSchema),
    expire_at: Type.Optional(ExpireAt),
    usage_limit: Type.Optional(
      Type.Union([Type.Integer(), Type.String({ maxLength: 32 })], {
        description:
          "How many purchases the link takes, 1–1,000,000 (default 1). Above 1, each purchase is a payment of its own with its own events, carrying the link's order_id as payment_link_order_id.",
        examples: [3],
      }),
    ),
  },
  closed,
);
export type DirectLinkInput = Static<typeof DirectLinkInputSchema>;

/** The ERP's link request: items, and the document id the order id derives from. */
export const ErpLinkInputSchema = Type.Object(
  {
    mercant_id: Type.String({
      maxLength: 255,
      description: 'The ERP document id; without order_id the link order id is "mercant_id:N".',
    }),
    item: Type.Array(ItemInputSchema, { minItems: 1, maxItems: 100 }),
    customer: Type.Optional(CustomerInputSchema),
    expire_at: Type.Optional(ExpireAt),
    order_id: Type.Optional(LinkOrderId),
  },
  closed,
);
export type ErpLinkInput = Static<typeof ErpLinkInputSchema>;

const order = {
  order_id: Type.String({ maxLength: 255, description: "The caller's id; at most 50 characters after sanitizing." }),
  nominal: Amount('Positive whole rupiah; a string of digits is accepted.'),
  customer: Type.Optional(CustomerInputSchema),
  items: Type.Optional(
    Type.Array(ItemInputSchema, { minItems: 1, maxItems: 100, description: 'Σ price × quantity must equal nominal.' }),
  ),
  expire_at: Type.Optional(
    Type.String({ maxLength: 64, description: 'ISO 8601 with offset, or "YYYY-MM-DD HH:mm:ss" in Jakarta time.' }),
  ),
};

/** `POST /api/charge`: the order, its payment type and that type's method object (defined in gateway/). */
export const ChargeInputSchema = Type.Object(
  { ...order, payment_type: PaymentTypeSchema, ...ChargeMethodsSchema.properties },
  closed,
);
export type ChargeInput = Static<typeof ChargeInputSchema>;

/** `POST /api/snap`. */
export const SnapInputSchema = Type.Object(
  {
    ...order,
    enabled_payments: Type.Optional(
      Type.Array(Type.String({ maxLength: 32 }), {
        maxItems: 30,
        description: 'Default: the configured links.enabled_payments, else every method.',
      }),
    ),
  },
  closed,
);
export type SnapInput = Static<typeof SnapInputSchema>;
