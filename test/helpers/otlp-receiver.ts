/** An OTLP/HTTP receiver on loopback (JSON bodies: OTEL_EXPORTER_OTLP_PROTOCOL=http/json) and a printer of the trees it got. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
}
export interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  attributes: Record<string, string | number | boolean | undefined>;
  service: string;
}

/** An OTLP/HTTP receiver (JSON bodies) on a loopback port: every span it was sent. */
export async function startOtlpReceiver(): Promise<{
  url: string;
  spans: Span[];
  paths: string[];
  close(): Promise<void>;
}> {
  const spans: Span[] = [];
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      if (req.url === '/v1/traces' && req.headers['content-type'] === 'application/json') {
        const doc = JSON.parse(body) as {
          resourceSpans: Array<{
            resource: { attributes: Array<{ key: string; value: OtlpValue }> };
            scopeSpans: Array<{
              spans: Array<
                Omit<Span, 'attributes' | 'service'> & { attributes: Array<{ key: string; value: OtlpValue }> }
              >;
            }>;
          }>;
        };
        for (const rs of doc.resourceSpans) {
          const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
          for (const ss of rs.scopeSpans)
            for (const s of ss.spans)
              spans.push({
                ...s,
                service,
                attributes: Object.fromEntries(
                  s.attributes.map((a) => [
                    a.key,
                    a.value.stringValue ??
                      a.value.boolValue ??
                      (a.value.intValue === undefined ? undefined : Number(a.value.intValue)),
                  ]),
                ),
              });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    paths,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The trace as an indented tree, children in start order. */
export function tree(spans: Span[]): string {
  const byParent = new Map<string, Span[]>();
  const ids = new Set(spans.map((s) => s.spanId));
  for (const s of spans) {
    const parent = s.parentSpanId && ids.has(s.parentSpanId) ? s.parentSpanId : '';
    byParent.set(parent, [...(byParent.get(parent) ?? []), s]);
  }
  const lines: string[] = [];
  const walk = (parent: string, depth: number) => {
    const children = (byParent.get(parent) ?? []).sort((a, b) =>
      BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1,
    );
    for (const s of children) {
      const attrs = Object.entries(s.attributes)
        .filter(([k]) => k.startsWith('paylink.') || k === 'http.response.status_code' || k === 'url.full')
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(' ');
      lines.push(`${'  '.repeat(depth)}${s.name}${attrs ? `  [${attrs}]` : ''}`);
      walk(s.spanId, depth + 1);
    }
  };
  walk('', 0);
  return lines.join('\n');
}
