/**
 * The load generator, run by `bench/run.ts` in a process of its own so that generating load never
 * competes with the server for the same event loop. Reads a spec (JSON file named on the command
 * line), runs autocannon, prints one JSON result on stdout.
 */
import fs from 'node:fs';
import autocannon from 'autocannon';

export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  /** A JSON file holding an array of request bodies (strings), sent in order, each once per cycle. */
  bodiesFile?: string;
  connections: number;
  amount: number;
  /** Requests per second over all connections (steady-rate runs). */
  overallRate?: number;
  /** Whether to report each request's send time (epoch ms, fractional) by body index. */
  sendTimes?: boolean;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  p50ms: number;
  p99ms: number;
  maxMs: number;
  /** Answers outside 2xx plus transport errors and timeouts. */
  failures: number;
  statusCodes: Record<string, number>;
  sendTimes?: number[];
}

const now = () => performance.timeOrigin + performance.now();

async function main(): Promise<void> {
  const file = process.argv[2];
  if (!file) throw new Error('usage: load.ts <spec.json>');
  const spec = JSON.parse(fs.readFileSync(file, 'utf8')) as LoadSpec;
  const bodies: string[] = spec.bodiesFile ? (JSON.parse(fs.readFileSync(spec.bodiesFile, 'utf8')) as string[]) : [];
  // Each connection is paced at a whole number of requests a second (bench/burst.ts, pacedConnections).
  if (spec.overallRate && spec.overallRate % spec.connections !== 0)
    throw new Error(`${spec.overallRate}/s over ${spec.connections} connections is not a whole rate per connection`);
  const sendTimes: number[] = [];
  let next = 0;
  const started = now();
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    amount: spec.amount,
    timeout: 30,
    // A run bounded by `amount` ends on the first sample tick after its last answer: with the
    // default tick of 1 s every rate came out as requests over a whole number of seconds (1,000
    // requests in 1.2 s read as 492/s, in 2.1 s as 330/s). Ticking every 10 ms bounds that error.
    sampleInt: 10,
    ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
    requests: [
      {
        method: spec.method,
        path: spec.path,
        headers: { ...(bodies.length > 0 ? { 'content-type': 'application/json' } : {}), ...spec.headers },
        setupRequest: (req) => {
          if (bodies.length === 0) return req;
          const i = next++ % bodies.length;
          if (spec.sendTimes) sendTimes[i] = now();
          return { ...req, body: bodies[i] };
        },
      },
    ],
  });
  const seconds = (now() - started) / 1000;
  const statusCodes: Record<string, number> = {};
  for (const [k, v] of Object.entries(result.statusCodeStats ?? {})) statusCodes[k] = v.count ?? 0;
  const out: LoadResult = {
    requests: result.requests.total,
    seconds,
    perSecond: result.requests.total / seconds,
    p50ms: result.latency.p50,
    p99ms: result.latency.p99,
    maxMs: result.latency.max,
    failures: result.non2xx + result.errors,
    statusCodes,
    ...(spec.sendTimes ? { sendTimes } : {}),
  };
  process.stdout.write(JSON.stringify(out));
}

main().catch((err: unknown) => {
  process.stderr.write(`load generator failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
