/**
 * Connect-time SSRF guard for ERP deliveries: the configured URL was checked when it was saved,
 * but a name can resolve (or be re-pointed) to another address later. Every address a name
 * resolves to is checked, and literal addresses before connecting. Link-local and cloud metadata
 * addresses are refused in every mode; in production private and loopback ones too.
 */
import dns from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { isLinkLocalOrMetadata, isPrivateHost } from '../url-policy.js';

export class PrivateAddressError extends Error {
  readonly code: 'EPRIVATEADDR' | 'ELINKLOCALADDR';
  constructor(host: string, linkLocal: boolean) {
    super(`refused: ${host} is or resolves to a ${linkLocal ? 'link-local or metadata' : 'private'} address`);
    this.name = 'PrivateAddressError';
    this.code = linkLocal ? 'ELINKLOCALADDR' : 'EPRIVATEADDR';
  }
}

/** Why a connection to `address` is refused: 'link-local', 'private', or undefined when allowed. */
export function addressRefusal(address: string, blockPrivate: boolean): 'link-local' | 'private' | undefined {
  if (isLinkLocalOrMetadata(address)) return 'link-local';
  return blockPrivate && isPrivateHost(address) ? 'private' : undefined;
}

type Resolve = (hostname: string, options: dns.LookupAllOptions, callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void) => void;
const systemResolve: Resolve = (hostname, options, callback) => dns.lookup(hostname, options, callback);

/** A `lookup` for undici's connector that resolves every address of a name and refuses the name if any is refused. */
export function guardedLookup(blockPrivate: boolean, resolve: Resolve = systemResolve): LookupFunction {
  return (hostname, options, callback) => {
    const nameRefusal = addressRefusal(hostname, blockPrivate);
    if (nameRefusal) return callback(new PrivateAddressError(hostname, nameRefusal === 'link-local'), '');
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const refusals = addresses.map((a) => addressRefusal(a.address, blockPrivate));
      if (addresses.length === 0 || refusals.some((r) => r !== undefined)) return callback(new PrivateAddressError(hostname, refusals.includes('link-local')), '');
      if (options.all) return callback(null, addresses);
      const [first] = addresses;
      return first ? callback(null, first.address, first.family) : callback(new PrivateAddressError(hostname, false), '');
    });
  };
}

/**
 * The refusal for a URL whose host needs no lookup (a literal address, `localhost`, a metadata
 * name): undici connects to those without calling `lookup`.
 */
export function literalRefusal(url: string, blockPrivate: boolean): 'link-local' | 'private' | undefined {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (isLinkLocalOrMetadata(host)) return 'link-local';
    return (isIP(host) !== 0 || host === 'localhost') && blockPrivate && isPrivateHost(host) ? 'private' : undefined;
  } catch {
    return undefined;
  }
}
