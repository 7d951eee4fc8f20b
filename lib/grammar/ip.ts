import { isIPv4, isIPv6 } from 'node:net';

export type IpFamily = 4 | 6;

/**
 * Returns the canonical form of an IP literal (v4 dotted quad; v6 lower case, RFC 5952
 * compressed), or null when the text is not a plain IP literal. Leading zeros are refused
 * because resolvers disagree on whether `010.0.0.1` is octal; zone ids (`%eth0`) because a
 * Corefile answer cannot carry them; IPv4-mapped IPv6 because it is a v4 address in disguise
 * that each tool prints differently (Kubernetes' own IP validation refuses it too).
 */
export function canonicalIp(text: string): string | null {
  if (isIPv4(text)) {
    return text.split('.').some((octet) => octet.length > 1 && octet.startsWith('0')) ? null : text;
  }
  if (isIPv6(text) && !text.includes('%')) {
    const canonical = new URL(`http://[${text}]/`).hostname.slice(1, -1);
    return /^::ffff:[0-9a-f]{1,4}:[0-9a-f]{1,4}$/.test(canonical) ? null : canonical;
  }
  return null;
}

export function ipFamily(ip: string): IpFamily {
  return isIPv4(ip) ? 4 : 6;
}

function ipBytes(ip: string): number[] {
  if (isIPv4(ip)) return ip.split('.').map(Number);
  const [head = '', tail = ''] = ip.split('::') as [string, string?];
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  let left = groups(head);
  let right = ip.includes('::') ? groups(tail) : [];
  const last = (right.length > 0 ? right : left).at(-1) ?? '';
  const embedded = isIPv4(last) ? last.split('.').map(Number) : null;
  if (embedded) {
    const words = [((embedded[0] ?? 0) << 8) | (embedded[1] ?? 0), ((embedded[2] ?? 0) << 8) | (embedded[3] ?? 0)].map((w) => w.toString(16));
    if (right.length > 0) right = [...right.slice(0, -1), ...words];
    else left = [...left.slice(0, -1), ...words];
  }
  const fill = new Array(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
}

/** Orders v4 before v6, then numerically. */
export function compareIps(a: string, b: string): number {
  const x = ipBytes(a);
  const y = ipBytes(b);
  if (x.length !== y.length) return x.length - y.length;
  for (let i = 0; i < x.length; i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Sorted, de-duplicated canonical IPs. The inputs must already be canonical. */
export function sortUniqueIps(ips: Iterable<string>): string[] {
  return [...new Set(ips)].sort(compareIps);
}

/** Sorted and de-duplicated, by family; runs once per node record on every render. */
/** Shared by every empty family: a record set keeps 25,000 of these, most of one family only. */
const NO_IPS: readonly string[] = Object.freeze([]);

export function splitFamilies(ips: Iterable<string>): { readonly v4: readonly string[]; readonly v6: readonly string[] } {
  const v4: string[] = [];
  const v6: string[] = [];
  for (const ip of sortUniqueIps(ips)) (isIPv4(ip) ? v4 : v6).push(ip);
  // Exact-size copies: an array grown by push keeps room for 17 (184 bytes for one address, 62
  // sliced: bench/heap-shapes.ts).
  return { v4: v4.length === 0 ? NO_IPS : v4.slice(), v6: v6.length === 0 ? NO_IPS : v6.slice() };
}

/** Loopback and unspecified addresses: a packet sent to one reaches this host. */
export function isThisHostIp(ip: string): boolean {
  const b = ipBytes(ip);
  if (b.length === 4) return b[0] === 127 || b.every((x) => x === 0);
  return b.slice(0, 15).every((x) => x === 0) && (b[15] === 0 || b[15] === 1);
}

/** Loopback, link-local and unspecified addresses: never usable as an upstream resolver. */
export function isLocalOnlyIp(ip: string): boolean {
  const b = ipBytes(ip);
  if (b.length === 4) return b[0] === 127 || (b[0] === 169 && b[1] === 254) || b.every((x) => x === 0);
  const mapped = b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
  if (mapped) return isLocalOnlyIp(b.slice(12).join('.'));
  const allZeroButLast = b.slice(0, 15).every((x) => x === 0);
  if (allZeroButLast && (b[15] === 0 || b[15] === 1)) return true;
  return b[0] === 0xfe && ((b[1] ?? 0) & 0xc0) === 0x80;
}
