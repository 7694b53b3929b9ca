/**
 * The connect-time half of the outbound address policy (url-policy.ts), shared by every outbound
 * client (ERP deliveries, the gateway): a URL was checked when it was configured, but a name can
 * resolve (or be re-pointed) to another address later. Every address a name resolves to is
 * checked, and literal addresses before connecting. Link-local and cloud metadata addresses are
 * refused in every mode; in production private and loopback ones too.
 */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { addressRefusal, type PrivatePolicy } from './url-policy.js';

export class PrivateAddressError extends Error {
  readonly code: 'EPRIVATEADDR' | 'ELINKLOCALADDR';
  constructor(host: string, linkLocal: boolean) {
    super(`refused: ${host} is or resolves to a ${linkLocal ? 'link-local or metadata' : 'private'} address`);
    this.name = 'PrivateAddressError';
    this.code = linkLocal ? 'ELINKLOCALADDR' : 'EPRIVATEADDR';
  }
}

export type Resolve = (
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;
const systemResolve: Resolve = (hostname, options, callback) => dns.lookup(hostname, options, callback);

/** A `lookup` for undici's connector that resolves every address of a name and refuses the name if any is refused. */
export function guardedLookup(blockPrivate: PrivatePolicy, resolve: Resolve = systemResolve): LookupFunction {
  return (hostname, options, callback) => {
    const nameRefusal = addressRefusal(hostname, blockPrivate);
    if (nameRefusal) return callback(new PrivateAddressError(hostname, nameRefusal === 'link-local'), '');
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const refusals = addresses.map((a) => addressRefusal(a.address, blockPrivate));
      if (addresses.length === 0 || refusals.some((r) => r !== undefined))
        return callback(new PrivateAddressError(hostname, refusals.includes('link-local')), '');
      if (options.all) return callback(null, addresses);
      const [first] = addresses;
      return first
        ? callback(null, first.address, first.family)
        : callback(new PrivateAddressError(hostname, false), '');
    });
  };
}

/**
 * The refusal for a URL whose host needs no lookup (a literal address, `localhost`, a metadata
 * name): undici connects to literal addresses without calling `lookup`. Undefined for other names
 * (the lookup judges what they resolve to) and for URLs that do not parse.
 */
export function literalRefusal(url: string, blockPrivate: PrivatePolicy): 'link-local' | 'private' | undefined {
  try {
    return addressRefusal(new URL(url).hostname, blockPrivate);
  } catch {
    return undefined;
  }
}

/** The refusal a failed connection carries, if the guard caused it (for log lines and stored errors). */
export function refusalOf(err: unknown): 'link-local' | 'private' | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = e?.code ?? e?.cause?.code;
  return code === 'ELINKLOCALADDR' ? 'link-local' : code === 'EPRIVATEADDR' ? 'private' : undefined;
}
