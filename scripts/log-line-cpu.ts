/**
 * CPU per log line of the service's logger (createLogger: pino, the redaction paths, the secret
 * scrubber, the daily file and stdout), for the lines the hot paths write: the request line, the
 * gateway call and the report line. Send stdout where the service's goes (a pipe, a file,
 * /dev/null); the figures go to stderr.
 *
 *   npx tsx scripts/log-line-cpu.ts [lines] > /dev/null
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { closeLogger, createLogger, flushLogger } from '../src/platform/logging/logger.js';

const n = Number(process.argv[2] ?? '50000');

function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paylink-log-cpu-'));
const logger = await createLogger({
  level: 'info',
  logDir: dir,
  stdout: true,
  secrets: ['SB-Mid-server-log-line-cpu', 'erp-key-log-line-cpu-0123456789', 'correct horse battery staple'],
});
const request = logger.child({ request_id: 'b06c42f2-61ca-4b1a-82a5-26b248719547' });
request.setBindings({ order_id: 'CPU-1', mercant_id: 'CPU-1' });
const req = {
  method: 'POST',
  url: '/webhook/midtrans',
  ip: '127.0.0.1',
  headers: { 'user-agent': 'Veritrans', authorization: 'Bearer erp-key-log-line-cpu-0123456789' },
};
const res = { statusCode: 200 };
const gateway = logger.child({ component: 'gateway' });
const lines: Array<[string, () => void]> = [
  ['request completed', () => request.info({ req, res, responseTime: 12.345 }, 'request completed')],
  [
    'gateway call',
    () =>
      gateway.info(
        {
          request_id: 'b06c42f2-61ca-4b1a-82a5-26b248719547',
          order_id: 'CPU-1',
          mercant_id: 'CPU-1',
          gateway: { op: 'core.status', method: 'GET', path: '/v2/CPU-1/status', status: 200, duration_ms: 9 },
        },
        'gateway call',
      ),
  ],
  [
    'gateway report processed',
    () =>
      logger.info(
        {
          order_id: 'CPU-1',
          gateway_order_id: 'CPU-1',
          source: 'webhook',
          result: 'applied',
          status: 'paid',
          transaction_status: 'settlement',
          event_id: '904ae142-75f9-446e-b461-eaac5a456d2c',
        },
        'gateway report processed',
      ),
  ],
];
for (let round = 0; round < 2; round++) {
  for (const [name, line] of lines) {
    await flushLogger(logger);
    const c0 = cpuUs();
    // In batches, letting the file's writes complete between them as a service's event loop would.
    for (let i = 0; i < n; i += 100) {
      for (let j = 0; j < 100; j++) line();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await flushLogger(logger);
    if (round === 1) process.stderr.write(`${name}: ${((cpuUs() - c0) / n).toFixed(2)} µs CPU per line\n`);
  }
}
await closeLogger(logger);
fs.rmSync(dir, { recursive: true, force: true });
