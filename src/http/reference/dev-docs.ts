/** Descriptions and examples of the Dev/Test operations (served only with LOG_EXPOSE_API), for the rendered reference. */
import type { OperationDoc } from './operation-docs.js';

const DEV_ONLY = 'Dev/Test only: served with `LOG_EXPOSE_API` (never in production), behind the operator credentials.';

const ECHO_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

const ECHO_DESCRIPTION =
  `${DEV_ONLY} Answers what reached this service after every proxy on the way: the method, the path, the query, the headers and the JSON body. ` +
  'Credentials (`authorization`, `x-api-key`, cookies) and secret-looking fields of the query and the body are shown as `[redacted]`, and every configured secret is masked wherever its value appears.';

function echoExample(method: string): unknown {
  const withBody = method === 'POST' || method === 'PUT' || method === 'PATCH';
  return {
    method,
    path: '/echo',
    query: { probe: '1' },
    headers: { host: 'paylink.example.com', 'x-forwarded-for': '203.0.113.7', authorization: '[redacted]', ...(withBody ? { 'content-type': 'application/json' } : {}) },
    body: withBody ? { order_id: 'INV/2026/0042:1', server_key: '[redacted]' } : null,
  };
}

const ECHO2_DESCRIPTION =
  `${DEV_ONLY} Answers the request body byte for byte, with the request's own \`Content-Type\` (\`application/octet-stream\` when there is none): ` +
  'to see what a client library or a proxy does to a body. The answer is sandboxed (`Content-Security-Policy: default-src \'none\'; sandbox`, `nosniff`), so echoed HTML never runs as a page of this service.';

export const DEV_DOCS: Record<string, OperationDoc> = {
  ...Object.fromEntries(ECHO_METHODS.map((m) => [`${m} /echo`, { description: ECHO_DESCRIPTION, ...(m === 'POST' ? { request: { order_id: 'INV/2026/0042:1', server_key: 'SB-Mid-server-…' } } : {}), answer: { status: '200', example: echoExample(m) } }])),
  ...Object.fromEntries(ECHO_METHODS.map((m) => [`${m} /echo2`, { description: ECHO2_DESCRIPTION }])),
  'POST /test-notify-erp': {
    description:
      `${DEV_ONLY} Writes a \`payment.test\` event (\`test: true\`, \`gross_amount\` 0, \`status_version\` 0) into the ERP outbox, signed and delivered like every event, ` +
      'waits for its first delivery attempt (at most the ERP timeout + 2 s) and answers how it went: `outcome`, the delivery `state`, the ERP\'s HTTP status, the error and the latency. ' +
      'Use it to check the ERP URL, the signing secret and the receiver\'s verification before going live; the receiver should check `type` and acknowledge test events without applying them. ' +
      'A test event never says `paid` (the status defaults to `pending`; `paid` is refused), so even a receiver that looks only at `status` cannot book it as a payment. ' +
      'Without `erp.notify_url` the event waits in the outbox and the answer says so (`pending`). Every field of the body is optional.',
    request: { mercant_id: 'INV/2026/0042', order_id: 'INV/2026/0042:1', status: 'expired' },
    answer: { status: '200', example: { event_id: '0b6f8f0e-64a4-4f7c-9d1a-6a0f3c2b9e11', outcome: 'delivered', state: 'delivered', http_status: 204, error: null, latency_ms: 38 } },
  },
};
