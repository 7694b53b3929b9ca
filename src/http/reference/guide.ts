/** The reference's introduction: how the ERP receives events, and the error catalogue (markdown). */
import { ERRORS, type ErrorCode } from '../../platform/errors.js';

export const STATUS_MEANINGS: Array<[string, string]> = [
  [
    'pending',
    'Never for a new order (it starts pending, without an event): only when a new payment attempt on the same order follows a failed, expired or cancelled one, so the order is open again.',
  ],
  ['challenge', 'A card payment held by the fraud check; it becomes paid or failed.'],
  ['paid', 'The money is taken (settled, or a card capture accepted). Ship the order.'],
  ['failed', 'Denied or failed; nothing was taken. A later payment of the same order may still come.'],
  ['cancelled', 'Cancelled (by the ERP, an operator or the gateway) before any money was taken.'],
  ['expired', 'Not paid in time; the link or code no longer works.'],
  ['partially_refunded', 'Part of the money was refunded; `refunded_amount` is the total so far.'],
  ['refunded', 'All of the money was refunded; `refunded_amount` equals `gross_amount`.'],
  ['chargeback', "The customer's bank reversed the payment."],
];

function catalogueTable(): string {
  const rows = (Object.keys(ERRORS) as ErrorCode[]).map(
    (c) => `| \`${c}\` | ${ERRORS[c].status} | ${ERRORS[c].doc.replace(/\|/g, '\\|')} |`,
  );
  return ['| code | HTTP | meaning |', '|---|---|---|', ...rows].join('\n');
}

export function introduction(): string {
  return `Payment links, Core API charges, Snap tokens, refunds and cancellations between an ERP and the Midtrans gateway, with verified gateway notifications and signed, durable ERP events.

**Authentication.** ERP-facing operations take an API key (\`Authorization: Bearer KEY\` or \`X-API-Key: KEY\`); operator operations HTTP Basic credentials. Creating POSTs honour \`Idempotency-Key\` (same key and body → the first answer replayed; another body → 422; still running → 409).

## ERP events

Every status change is POSTed to the configured ERP URL as a \`payment.status_changed\` event (see *Webhooks*), at least once and in order per \`order_id\`, with the [Standard Webhooks](https://www.standardwebhooks.com) headers \`webhook-id\` (= \`event_id\`, the same on every retry), \`webhook-timestamp\` and \`webhook-signature\` (\`v1,\` + base64 HMAC-SHA256 of \`id.timestamp.body\`). Answer any 2xx once the event is stored; anything else is retried with backoff for about three days.

- **Verify** the signature with a Standard Webhooks library and the shared secret before trusting the body, and refuse timestamps older than five minutes (the libraries do).
- **Deduplicate** on \`event_id\`: a retry after a lost answer repeats the same event.
- **Order** by \`status_version\`: it grows with every change of the order, so an event whose version is not higher than the last one applied is older news (e.g. a hand-retried old event) and can be acknowledged and ignored.

| status | meaning |
|---|---|
${STATUS_MEANINGS.map(([s, m]) => `| \`${s}\` | ${m} |`).join('\n')}

Node (\`standardwebhooks\`):

\`\`\`js
import { Webhook } from 'standardwebhooks';
const wh = new Webhook(process.env.ERP_WEBHOOK_SECRET); // whsec_…
const event = wh.verify(rawBody, { 'webhook-id': h['webhook-id'], 'webhook-timestamp': h['webhook-timestamp'], 'webhook-signature': h['webhook-signature'] });
\`\`\`

Python (\`pip install standardwebhooks\`):

\`\`\`python
from standardwebhooks.webhooks import Webhook
event = Webhook(secret).verify(raw_body, request.headers)
\`\`\`

PHP (\`composer require standard-webhooks/standard-webhooks\`):

\`\`\`php
// verify() looks the webhook-* headers up by lower-case name; getallheaders() keeps the sender's case.
$event = (new \\StandardWebhooks\\Webhook($secret))->verify($rawBody, array_change_key_case(getallheaders(), CASE_LOWER));
\`\`\`

## Errors

Every error is \`application/problem+json\` (RFC 9457) with \`code\`, \`detail\`, \`request_id\` (give it to an operator: it finds the log lines) and, for field problems, \`errors[]\`. Gateway refusals carry \`gateway.status_code\` and \`gateway.status_message\`. The catalogue is also at the end of this page (\`/docs#error-CODE\`).

${catalogueTable()}
`;
}
