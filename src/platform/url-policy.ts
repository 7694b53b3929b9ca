import { BlockList, isIP } from 'node:net';

/**
 * Where a configurable outbound URL (the ERP callback, the gateway hosts) may point. Two classes
 * of address are refused:
 * - link-local and cloud metadata addresses: in every mode (instance metadata hands out cloud
 *   credentials, and no gateway or ERP ever lives there);
 * - loopback, private, CGNAT, unspecified, multicast and reserved ranges: in production (outside it
 *   the embedded simulator and local ERPs live on loopback or a private network).
 * An IPv6 address that carries an IPv4 address (IPv4-mapped, IPv4-compatible, IPv4-translated,
 * NAT64, 6to4, Teredo) is judged by the IPv4 address it reaches as well as by its own range, so
 * `[::a9fe:a9fe]` or `[64:ff9b::a9fe:a9fe]` is the metadata address it spells.
 */
const private4 = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) {
  private4.addSubnet(net, bits, 'ipv4');
}
const private6 = new BlockList();
for (const [net, bits] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible form
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT): only ever a local translator
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215): a translator inside this network
  ['100::', 64], // discard-only
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  private6.addSubnet(net, bits, 'ipv6');
}

const linkLocal4 = new BlockList();
linkLocal4.addSubnet('169.254.0.0', 16, 'ipv4');
linkLocal4.addAddress('100.100.100.200', 'ipv4'); // Alibaba Cloud metadata
linkLocal4.addAddress('168.63.129.16', 'ipv4'); // Azure platform (WireServer)
linkLocal4.addAddress('192.0.0.192', 'ipv4'); // Oracle Cloud metadata (classic)
const linkLocal6 = new BlockList();
linkLocal6.addSubnet('fe80::', 10, 'ipv6');
linkLocal6.addAddress('fd00:ec2::254', 'ipv6'); // AWS metadata over IPv6
linkLocal6.addAddress('fd20:ce::254', 'ipv6'); // Google Cloud metadata over IPv6
const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'metadata.azure.internal',
  'instance-data',
  'instance-data.ec2.internal',
]);

/** `[::1]`, `LOCALHOST.` and `fe80::1%eth0` as plain lower-case addresses or names. */
function bareHost(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, '')
    .replace(/%.*$/, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

/** The 16 bytes of an IPv6 address already known to be one (`isIP` = 6, zone removed). */
function ipv6Bytes(address: string): Uint8Array {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${(((a ?? 0) << 8) | (b ?? 0)).toString(16)}:${(((c ?? 0) << 8) | (d ?? 0)).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const groups = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const left = groups(head);
  const right = rest === undefined ? [] : groups(rest);
  const words = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => {
    bytes[2 * i] = w >> 8;
    bytes[2 * i + 1] = w & 0xff;
  });
  return bytes;
}

const v4At = (b: Uint8Array, i: number, xor = 0) =>
  [0, 1, 2, 3].map((k) => ((b[i + k] ?? 0) ^ xor).toString()).join('.');
const zeros = (b: Uint8Array, from: number, to: number) => b.subarray(from, to).every((x) => x === 0);
const word = (b: Uint8Array, i: number) => ((b[2 * i] ?? 0) << 8) | (b[2 * i + 1] ?? 0);

/**
 * The IPv4 addresses an IPv6 address can reach or stands for: IPv4-mapped and -compatible
 * (`::ffff:a.b.c.d`, `::a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`), NAT64 (`64:ff9b::/96`,
 * and every RFC 6052 position inside the local-use `64:ff9b:1::/48`), 6to4 (`2002::/16`) and
 * Teredo (`2001::/32`: its server, and its client stored inverted).
 */
export function embeddedIpv4(address: string): string[] {
  const b = ipv6Bytes(address);
  const out: string[] = [];
  if (zeros(b, 0, 10) && ((b[10] === 0xff && b[11] === 0xff) || (b[10] === 0 && b[11] === 0))) out.push(v4At(b, 12));
  if (zeros(b, 0, 8) && word(b, 4) === 0xffff && word(b, 5) === 0) out.push(v4At(b, 12));
  if (word(b, 0) === 0x64 && word(b, 1) === 0xff9b) {
    if (zeros(b, 4, 12)) out.push(v4At(b, 12));
    if (word(b, 2) === 1) {
      // RFC 6052 positions for /48, /56, /64 and /96 prefixes (bits 64-71 are always zero).
      out.push(
        [b[6], b[7], b[9], b[10]].join('.'),
        [b[7], b[9], b[10], b[11]].join('.'),
        [b[9], b[10], b[11], b[12]].join('.'),
        v4At(b, 12),
      );
    }
  }
  if (word(b, 0) === 0x2002) out.push(v4At(b, 2));
  if (word(b, 0) === 0x2001 && word(b, 1) === 0) out.push(v4At(b, 4), v4At(b, 12, 0xff));
  return out;
}

/** True for link-local and cloud metadata addresses and names, in any spelling. */
export function isLinkLocalOrMetadata(hostname: string): boolean {
  const host = bareHost(hostname);
  if (METADATA_NAMES.has(host)) return true;
  const kind = isIP(host);
  if (kind === 4) return linkLocal4.check(host, 'ipv4');
  if (kind === 6)
    return linkLocal6.check(host, 'ipv6') || embeddedIpv4(host).some((v4) => linkLocal4.check(v4, 'ipv4'));
  return false;
}

/**
 * True for `localhost` names and literal loopback, private, link-local and reserved addresses, in
 * any spelling. The WHATWG URL parser has already turned decimal, octal and hex IPv4 forms
 * (`2130706433`, `0177.0.0.1`, `0x7f.1`) into dotted quads, so checking `URL.hostname` covers
 * them. Names that merely resolve to such an address are the connect-time check's business.
 */
export function isPrivateHost(hostname: string): boolean {
  const host = bareHost(hostname);
  if (host === 'localhost' || host.endsWith('.localhost') || host === '') return true;
  const kind = isIP(host);
  if (kind === 4) return private4.check(host, 'ipv4');
  if (kind === 6) return private6.check(host, 'ipv6') || embeddedIpv4(host).some((v4) => private4.check(v4, 'ipv4'));
  return false;
}

/**
 * Private ranges an outbound client may reach although private ones are refused (production): an
 * on-premises ERP (`ERP_ALLOW_PRIVATE_NETWORKS`). They never open link-local or metadata
 * addresses, which `addressRefusal` refuses before asking. An IPv6 address is in a range when it is
 * itself, or when it is IPv4-mapped (`::ffff:a.b.c.d`) and its IPv4 address is.
 */
export class AllowedNetworks {
  private readonly list = new BlockList();
  /** `cidrs` as `cidrListProblem` accepts them (a bare address is a single-address range). */
  constructor(readonly cidrs: readonly string[]) {
    for (const c of cidrs) {
      const [addr = '', bits] = c.split('/');
      const family = isIP(addr) === 4 ? 'ipv4' : 'ipv6';
      this.list.addSubnet(addr, bits === undefined ? (family === 'ipv4' ? 32 : 128) : Number(bits), family);
    }
  }

  includes(address: string): boolean {
    const host = bareHost(address);
    const kind = isIP(host);
    if (kind === 4) return this.list.check(host, 'ipv4');
    if (kind !== 6) return false;
    if (this.list.check(host, 'ipv6')) return true;
    const b = ipv6Bytes(host);
    return zeros(b, 0, 10) && b[10] === 0xff && b[11] === 0xff && this.list.check(v4At(b, 12), 'ipv4');
  }
}

/** Which private addresses are refused: none (`false`), all (`true`), or all outside the allowed networks. */
export type PrivatePolicy = boolean | AllowedNetworks;

/** A comma-separated list of CIDR ranges (or single addresses); undefined when every item is one, else the problem. */
export function cidrListProblem(items: readonly string[]): string | undefined {
  const valid = (x: string) => {
    const [addr = '', bits, ...rest] = x.split('/');
    const kind = isIP(addr);
    if (kind === 0 || rest.length > 0 || addr.includes('%')) return false;
    return bits === undefined || (/^[0-9]{1,3}$/.test(bits) && Number(bits) <= (kind === 4 ? 32 : 128));
  };
  return items.length > 0 && items.every(valid)
    ? undefined
    : 'must list CIDR ranges such as 10.20.0.0/16, comma-separated';
}

/**
 * Why a connection to `address` (a literal address, or a name) is refused: 'link-local' in every
 * mode, 'private' when `blockPrivate` (production) unless the address is in its allowed networks;
 * undefined when it is allowed.
 */
export function addressRefusal(address: string, blockPrivate: PrivatePolicy): 'link-local' | 'private' | undefined {
  if (isLinkLocalOrMetadata(address)) return 'link-local';
  if (blockPrivate === false || !isPrivateHost(address)) return undefined;
  return blockPrivate instanceof AllowedNetworks && blockPrivate.includes(address) ? undefined : 'private';
}

/** C0 and C1 control characters and DEL: the URL parser silently drops some of them (CR, LF, TAB). */
export const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Why `raw` is not acceptable as an outbound URL, or undefined when it is. `allowed`: private
 * networks a production URL may name (the ERP's, `ERP_ALLOW_PRIVATE_NETWORKS`).
 */
export function outboundUrlProblem(raw: string, production: boolean, allowed?: AllowedNetworks): string | undefined {
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
  if (isPrivateHost(url.hostname) && !allowed?.includes(url.hostname))
    return 'must not point to a private, loopback or link-local address in production';
  return undefined;
}
