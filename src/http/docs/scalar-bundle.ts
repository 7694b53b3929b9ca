/**
 * Scalar's API reference bundle, taken from the kept `@scalar/fastify-api-reference` package: the
 * plugin is registered on a private Fastify instance that never listens, and its script route is
 * asked once. Our own authenticated routes serve the bytes, so nothing is ever loaded from a CDN.
 */
import Fastify from 'fastify';

let bundle: Promise<string> | undefined;

async function load(): Promise<string> {
  // Imported on the first request for /docs, not at start: the package holds the whole renderer
  // (about 30 MB of heap once loaded), which a service that never shows /docs should not carry.
  const { default: scalar } = await import('@scalar/fastify-api-reference');
  const inner = Fastify({ logger: false });
  try {
    await inner.register(scalar, { routePrefix: '/reference', configuration: { content: { openapi: '3.1.0', info: { title: 'x', version: '0' }, paths: {} } } });
    const res = await inner.inject({ method: 'GET', url: '/reference/js/scalar.js' });
    if (res.statusCode !== 200 || res.body.length < 10_000) throw new Error(`Scalar bundle not available (${res.statusCode})`);
    return res.body;
  } finally {
    await inner.close();
  }
}

export function scalarBundle(): Promise<string> {
  bundle ??= load().catch((err: unknown) => {
    bundle = undefined;
    throw err;
  });
  return bundle;
}
