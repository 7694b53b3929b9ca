import { GatewayError } from './port.js';

/** A gateway answer's body as text, refused past `maxBytes` (a misbehaving host cannot fill memory). */
export async function readCapped(
  stream: AsyncIterable<Buffer | Uint8Array> & { destroy(): void },
  maxBytes: number,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size > maxBytes) {
      stream.destroy();
      throw new GatewayError('bad_response', 'gateway response exceeds the size cap');
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks).toString('utf8');
}
