import type { FastifyInstance, FastifyReply } from 'fastify';
import type { SimContext } from '../context.js';
import { coreError } from '../http.js';
import type { Txn } from '../state.js';

function notFound(reply: FastifyReply): FastifyReply {
  return reply.code(404).send(coreError('404', "Transaction doesn't exist."));
}

/** What a charge's generate-qr-code action encodes: the QRIS `qr_string`, or GoPay's own payload. */
function qrText(t: Txn): string | undefined {
  if (t.payment_type === 'qris') return typeof t.fields.qr_string === 'string' ? t.fields.qr_string : undefined;
  if (t.payment_type === 'gopay') return t.qr;
  return undefined;
}

/**
 * The `generate-qr-code` actions of GoPay and QRIS charges: a PNG, fetched by the customer's browser
 * without the server key, as the gateway's image URL is.
 */
export function registerActions(app: FastifyInstance, ctx: SimContext): void {
  for (const kind of ['gopay', 'qris'] as const) {
    app.get<{ Params: { id: string } }>(`/v2/${kind}/:id/qr-code`, async (req, reply) => {
      const t = ctx.merchants.txnById(req.params.id)?.item;
      const text = t && t.payment_type === kind ? qrText(t) : undefined;
      if (text === undefined) return notFound(reply);
      // Loaded on first use: the embedded simulator starts with the service (qrcode: about 60 ms of CPU).
      const { default: QRCode } = await import('qrcode');
      const png = await QRCode.toBuffer(text, { type: 'png', errorCorrectionLevel: 'M', margin: 2, scale: 4 });
      return reply.code(200).type('image/png').header('cache-control', 'no-store').send(png);
    });
  }
}
