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

/**
 * Never a target in any mode: link-local ranges (where every cloud's instance metadata service
 * answers, 169.254.169.254 among them) and the other metadata and platform addresses.
 */
const linkLocal = new BlockList();
linkLocal.addSubnet('169.254.0.0', 16, 'ipv4');
linkLocal.addAddress('100.100.100.200', 'ipv4'); // Alibaba Cloud metadata
linkLocal.addAddress('168.63.129.16', 'ipv4'); // Azure platform (WireServer)
linkLocal.addSubnet('fe80::', 10, 'ipv6');
linkLocal.addAddress('fd00:ec2::254', 'ipv6'); // AWS metadata over IPv6
const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'metadata.azure.internal', 'instance-data', 'instance-data.ec2.internal']);

/** True for link-local and cloud metadata addresses and names (literal forms; resolved names are checked at connect time). */
export function isLinkLocalOrMetadata(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (METADATA_NAMES.has(host)) return true;
  const kind = isIP(host);
  if (kind === 4) return linkLocal.check(host, 'ipv4');
  if (kind === 6) return linkLocal.check(host, 'ipv6');
  return false;
}

/** C0 and C1 control characters and DEL: the URL parser silently drops some of them (CR, LF, TAB). */
export const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/** Why `raw` is not acceptable as an outbound URL, or undefined when it is. */
export function outboundUrlProblem(raw: string, production: boolean): string | undefined {
  if (CONTROL_CHARACTER.test(raw)) return 'must not contain control characters';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http(s) URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http(s) URL';
  if (url.username || url.password) return 'must not carry credentials';
  if (isLinkLocalOrMetadata(url.hostname)) return 'must not point to a link-local or cloud metadata address';
  if (!production) return undefined;
  if (url.protocol !== 'https:') return 'must use https in production';
  if (isPrivateHost(url.hostname)) return 'must not point to a private, loopback or link-local address in production';
  return undefined;
}
