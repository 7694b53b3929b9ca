import { BlockList, isIP } from 'node:net';

/**
 * Addresses a configurable outbound URL (the ERP callback, gateway hosts) must not point to in
 * production: loopback, private, link-local (cloud metadata), CGNAT, unspecified, multicast and
 * reserved ranges. IPv4-mapped IPv6 (`::ffff:127.0.0.1`) is checked against the IPv4 rules by
 * BlockList itself.
 */
const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) {
  blocked.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 96],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net, bits, 'ipv6');
}

/**
 * True for `localhost` names and literal private addresses. The WHATWG URL parser has already
 * turned decimal, octal and hex IPv4 forms (`2130706433`, `0177.0.0.1`, `0x7f.1`) into dotted
 * quads, so checking `URL.hostname` covers them. Names that merely resolve to a private address
 * are the connect-time check's business.
 */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host === '') return true;
  const kind = isIP(host);
  if (kind === 4) return blocked.check(host, 'ipv4');
  if (kind === 6) return blocked.check(host, 'ipv6');
  return false;
}

/** Why `raw` is not acceptable as an outbound URL, or undefined when it is. */
export function outboundUrlProblem(raw: string, production: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http(s) URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http(s) URL';
  if (url.username || url.password) return 'must not carry credentials';
  if (!production) return undefined;
  if (url.protocol !== 'https:') return 'must use https in production';
  if (isPrivateHost(url.hostname)) return 'must not point to a private, loopback or link-local address in production';
  return undefined;
}
