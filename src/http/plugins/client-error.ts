import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { ERRORS, problem, type ErrorCode } from '../../platform/errors.js';

/** How long a refused connection may linger for the client to read the answer before it is cut. */
const LINGER_MS = 2_000;

function codeFor(err: NodeJS.ErrnoException): ErrorCode {
  if (err.code === 'HPE_HEADER_OVERFLOW') return 'HEADERS_TOO_LARGE';
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'ERR_HTTP_HEADERS_TIMEOUT') return 'REQUEST_TIMEOUT';
  return 'MALFORMED_REQUEST';
}

/**
 * Requests Node's HTTP parser refuses (headers over 16 KiB, a malformed request line, a bad header
 * byte, a request that never finished) never reach Fastify. They still get problem+json with a
 * request id. The parser cannot continue on that connection, so the answer says
 * `Connection: close` — a keep-alive client then opens a new connection for its next request
 * instead of failing on a dead one — and the socket is ended gracefully after the write (a reset
 * could discard the answer), with a short deadline in case the client never closes its side.
 */
export function clientErrorHandler(logger: FastifyBaseLogger) {
  return (err: NodeJS.ErrnoException, socket: Socket): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const code = codeFor(err);
    const requestId = randomUUID();
    logger.info({ request_id: requestId, code, parser_error: err.code }, 'request refused by the HTTP parser');
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const { status, title } = ERRORS[code];
    const body = JSON.stringify(problem(code, requestId));
    socket.write(
      `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    );
    // Whatever the client still sends is read and dropped, so closing does not turn into a reset.
    socket.on('data', () => undefined);
    socket.resume();
    socket.end();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
}
