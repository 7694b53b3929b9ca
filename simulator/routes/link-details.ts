import type { Merchant } from '../merchants.js';
import { offsetTimeShort } from '../lib/format.js';
import type { Json } from '../lib/validate.js';
import type { PaymentLink } from '../state.js';

/** GET /v1/payment-links/{order_id}: the details document, purchases with upper-case statuses. */
export function linkDetails(m: Merchant, baseUrl: string, link: PaymentLink): Json {
  const created = link.created_at.toISOString();
  const stamp = { payment_link_id: link.id, created_at: created, updated_at: created };
  const out: Json = {
    id: String(link.id),
    payment_link_url: `${baseUrl}/payment-links/${link.payment_link_id}`,
    order_id: link.order_id,
    payment_link_type: link.payment_link_type,
    merchant_id: m.id,
    payment_link_id: link.payment_link_id,
    enabled_payments: link.enabled_payments,
    usage_limit: link.usage_limit,
    gross_amount: link.gross_amount,
    credit_card_3d_secure: link.credit_card_3d_secure,
    whitelist_bins: link.whitelist_bins,
    expiry_start: offsetTimeShort(link.expiry_start),
    expiry_duration: link.expiry_duration,
    expiry_unit: link.expiry_unit,
    usage: m.engine.linkUsage(link).paid,
    item_details: link.items.map((it, i) => ({
      id: it.id ?? String(i + 1),
      name: it.name,
      price: it.price,
      quantity: it.quantity,
      brand: it.brand ?? null,
      category: it.category ?? null,
      merchant_name: it.merchant_name ?? null,
      item_id: it.id ?? String(i + 1),
      ...stamp,
    })),
    purchases: link.purchases.map((p) => {
      const t = m.ledger.txns.get(p.transaction_id);
      return {
        id: p.id,
        snap_token: p.snap_token,
        order_id: p.order_id,
        payment_status: (t?.status ?? 'pending').toUpperCase(),
        payment_method: (t?.payment_type ?? '').toUpperCase(),
        created_at: p.created_at.toISOString(),
        updated_at: p.created_at.toISOString(),
      };
    }),
    ...link.extras,
  };
  if (link.title !== undefined) out.title = link.title;
  if (link.dynamic_amount) out.dynamic_amount = { ...link.dynamic_amount };
  if (link.customer) out.customer_details = { id: link.id, ...link.customer, ...stamp };
  return out;
}
