// A minimal ERP endpoint for paylink's events (Node 20, `npm install standardwebhooks`).
import http from 'node:http';
import { Webhook } from 'standardwebhooks';

/** Verifies a delivery and returns its event; throws when the signature, id or timestamp is wrong. */
export function verifyPaylinkEvent(secret, rawBody, headers) {
  // The same secret as paylink's ERP_WEBHOOK_SECRET: `whsec_<base64>`, or any other text used as is.
  const wh = secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });
  return wh.verify(rawBody, { 'webhook-id': headers['webhook-id'], 'webhook-timestamp': headers['webhook-timestamp'], 'webhook-signature': headers['webhook-signature'] });
}

const seen = new Map(); // order_id → highest status_version applied (keep it in your database)

export function createReceiver(secret, apply) {
  return http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let event;
      try {
        event = verifyPaylinkEvent(secret, Buffer.concat(chunks).toString('utf8'), req.headers);
      } catch {
        res.writeHead(401).end();
        return;
      }
      // Only payment.status_changed moves an order; a test event (payment.test) is acknowledged, never applied.
      if (event.type !== 'payment.status_changed') {
        res.writeHead(204).end();
        return;
      }
      // At least once: the same event_id may come again. Older news (a lower status_version) is ignored.
      const last = seen.get(event.order_id) ?? -1;
      if (event.status_version > last) {
        apply(event);
        seen.set(event.order_id, event.status_version);
      }
      res.writeHead(204).end();
    });
  });
}

// Run it: ERP_WEBHOOK_SECRET=<the secret paylink signs with> RECEIVER_PORT=8080 node erp-receiver.mjs
if (import.meta.url === `file://${process.argv[1]}`) {
  const secret = process.env.ERP_WEBHOOK_SECRET ?? '';
  if (secret === '') {
    // Without the secret nothing can be verified, and an unverified event must never move an order.
    console.error('ERP_WEBHOOK_SECRET is not set: set it to the secret paylink signs its events with.');
    process.exit(1);
  }
  const port = Number(process.env.RECEIVER_PORT ?? 8080);
  const server = createReceiver(secret, (e) => console.log(JSON.stringify(e)));
  server.listen(port, () => console.log(`ERP receiver listening on port ${server.address().port}`));
}
