/**
 * Connect-time SSRF guard for ERP deliveries in production: the configured URL was checked when it
 * was saved, but a name can resolve (or be re-pointed) to a private address later. Every address a
 * name resolves to is checked, and literal addresses before connecting.
 */
import dns from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { isPrivateHost } from '../http/url-policy.js';

export class PrivateAddressError extends Error {
  readonly code = 'EPRIVATEADDR';
  constructor(host: string) {
    super(`refused: ${host} is or resolves to a private address`);
    this.name = 'PrivateAddressError';
  }
}

export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '');
    if (addresses.length === 0 || addresses.some((a) => isPrivateHost(a.address))) return callback(new PrivateAddressError(hostname), '');
    if (options.all) return callback(null, addresses);
    const [first] = addresses;
    return first ? callback(null, first.address, first.family) : callback(new PrivateAddressError(hostname), '');
  });
};

/** True when `url` names a literal private address (no lookup happens for those). */
export function isPrivateLiteral(url: string): boolean {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return (isIP(host) !== 0 || host === 'localhost') && isPrivateHost(host);
  } catch {
    return false;
  }
}
