/**
 * The gateway's answers, parsed leniently at the edge: unknown fields are kept but never trusted,
 * required fields are checked, and anything unparseable is a `bad_response`. The answer about a
 * transaction has paylink's shape (`gateway/answer.ts`); the Payment Link and Snap answers stay here.
 */
import { Type, type Static, type TSchema } from 'typebox';
import { compiledCheck } from './compiled-check.js';
import { GatewayError } from '../port.js';
import { GatewayAnswerSchema, type GatewayAnswer } from '../answer.js';

const Str = Type.String({ maxLength: 4096 });

export const PaymentLinkCreatedSchema = Type.Object({ order_id: Str, payment_url: Str });
export type PaymentLinkCreated = Static<typeof PaymentLinkCreatedSchema>;

export const PaymentLinkDetailsSchema = Type.Object({
  order_id: Type.Optional(Str),
  payment_link_url: Type.Optional(Str),
  payment_link_id: Type.Optional(Str),
  gross_amount: Type.Optional(Type.Union([Type.Number(), Str])),
  purchases: Type.Optional(
    Type.Array(
      Type.Object({
        order_id: Type.Optional(Str),
        payment_status: Type.Optional(Str),
        payment_method: Type.Optional(Type.Union([Str, Type.Null()])),
      }),
      { maxItems: 10_000 },
    ),
  ),
});
export type PaymentLinkDetails = Static<typeof PaymentLinkDetailsSchema>;

/** The order id of the newest purchase on a payment link (purchase order ids end in a millisecond timestamp); null when it has none. */
export function newestPurchase(link: PaymentLinkDetails): string | null {
  const ids = (link.purchases ?? [])
    .map((p) => p.order_id)
    .filter((id): id is string => typeof id === 'string' && id.length > 0);
  if (ids.length === 0) return null;
  const suffix = (id: string) => Number(/-(\d+)$/.exec(id)?.[1] ?? '0');
  return ids.reduce((best, id) => (suffix(id) >= suffix(best) ? id : best));
}

export const SnapCreatedSchema = Type.Object({ token: Str, redirect_url: Str });
export type SnapCreated = Static<typeof SnapCreatedSchema>;

function parser<S extends TSchema>(schema: S, what: string): (body: unknown) => Static<S> {
  const check = compiledCheck(schema);
  return (body) => {
    if (!check(body)) throw new GatewayError('bad_response', `unexpected ${what} from gateway`);
    return body;
  };
}

export const parsePaymentLinkCreated = parser(PaymentLinkCreatedSchema, 'payment link answer');
export const parsePaymentLinkDetails = parser(PaymentLinkDetailsSchema, 'payment link details');
export const parseSnapCreated = parser(SnapCreatedSchema, 'Snap answer');

const isCoreAnswer = compiledCheck(GatewayAnswerSchema);

/** Undefined when the body is not a Core answer (then the caller treats it as a bad response). */
export function parseCoreResponse(b: unknown): GatewayAnswer | undefined {
  return isCoreAnswer(b) ? b : undefined;
}

/** `error_messages` is an array on most APIs but a plain string on some 401s; `validation_messages` on Core. */
export function parseErrorMessages(b: unknown): string[] {
  if (b === null || typeof b !== 'object') return [];
  const rec = b as Record<string, unknown>;
  const out: string[] = [];
  for (const k of ['error_messages', 'validation_messages']) {
    const v = rec[k];
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) for (const m of v) if (typeof m === 'string') out.push(m);
  }
  return out.slice(0, 20);
}
