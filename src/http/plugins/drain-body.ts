import type { IncomingMessage } from 'node:http';

/**
 * The most of a refused body that is read and dropped before its answer: 64 MiB, the largest body
 * any route takes (a gateway report). A report sent to the wrong route, or one a little over its
 * limit, is still answered; reading that much takes well under a second on a LAN, and nothing of it
 * is kept. A body declared larger is not read at all, and one that turns out larger is cut here:
 * its client may then see the connection reset. A client that stops sending is cut by the request
 * timeout (408), which also ends this wait.
 */
export const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * Reads what is left of `req`'s body and drops it. Resolves true once the body has ended (or the
 * request is gone), false when it was left unread: declared larger than `limit`, or cut after
 * `limit` bytes were dropped — the connection can then only be closed.
 *
 * Why: an error answered while the body is still arriving — Fastify refusing a body over its limit
 * on its Content-Length (or once the limit is passed), an import failing half-way through its file —
 * leaves bytes the server never reads. Closing the socket on them makes the kernel reset the
 * connection, and the client, still writing, gets EPIPE or ECONNRESET, often before it reads the
 * answer. With the body read to its end the answer is always there to read, and the close after
 * it (when there is one) is a plain FIN.
 */
export function drainBody(req: IncomingMessage, limit = DRAIN_LIMIT_BYTES): Promise<boolean> {
  if (req.complete || req.readableEnded || req.destroyed) return Promise.resolve(true);
  if (Number(req.headers['content-length']) > limit) return Promise.resolve(false);
  return new Promise((resolve) => {
    let dropped = 0;
    const finish = (ended: boolean) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onEnd);
      req.off('error', onEnd);
      resolve(ended);
    };
    const onEnd = () => finish(true);
    const onData = (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > limit) {
        req.pause();
        finish(false);
      }
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onEnd);
    req.once('error', onEnd);
    req.resume();
  });
}
