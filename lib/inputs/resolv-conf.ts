import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { ConfigError } from '../errors.js';
import { canonicalIp, isLocalOnlyIp, sortUniqueIps } from '../grammar/ip.js';
import { LIMITS } from '../model.js';

const OVER_LIMIT = `over the limit of ${LIMITS.maxUpstreams}` as const;

export type DropReason = 'loopback or link-local' | 'own address' | 'not an IP literal' | 'duplicate' | typeof OVER_LIMIT;

export interface DroppedUpstream {
  readonly address: string;
  readonly reason: DropReason;
}

export interface UpstreamSelection {
  /** Canonical IP literals, in resolv.conf order. */
  readonly upstreams: string[];
  readonly dropped: DroppedUpstream[];
}

/**
 * `nameserver` lines in order; comments (# and ;), other keywords and blank lines ignored.
 * Like glibc, only the first word after `nameserver` counts, so a trailing comment is harmless.
 */
export function parseResolvConf(text: string): string[] {
  const servers: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed.startsWith('#') || trimmed.startsWith(';')) continue;
    const [keyword, address] = trimmed.split(/\s+/);
    if (keyword === 'nameserver' && address !== undefined) servers.push(address);
  }
  return servers;
}

/**
 * Keeps order; drops what CoreDNS must not forward to; at most LIMITS.maxUpstreams.
 * Throws ConfigError when nothing usable remains, since CoreDNS would then forward to itself or nowhere.
 */
export function selectUpstreams(nameservers: readonly string[], ownAddresses: readonly string[], source?: string): UpstreamSelection {
  const own = new Set(ownAddresses.map((address) => canonicalIp(address)).filter((ip): ip is string => ip !== null));
  const upstreams: string[] = [];
  const dropped: DroppedUpstream[] = [];
  for (const address of nameservers) {
    const verdict = judge(address, own, upstreams);
    if ('reason' in verdict) dropped.push({ address, reason: verdict.reason });
    else upstreams.push(verdict.ip);
  }
  if (upstreams.length === 0) {
    const from = source ?? 'the nameserver list';
    const what =
      dropped.length === 0
        ? `${from} lists no nameserver`
        : `no usable upstream resolver in ${from}: ${dropped.map((d) => `${d.address} (${d.reason})`).join(', ')}`;
    throw new ConfigError(
      `${what}. CoreDNS must forward to resolvers outside this node, or it forwards to itself; point --resolv-conf at the host's real upstream file, such as /run/systemd/resolve/resolv.conf when systemd-resolved is in use`,
    );
  }
  return { upstreams, dropped };
}

function judge(address: string, own: ReadonlySet<string>, kept: readonly string[]): { ip: string } | { reason: DropReason } {
  // Checked on the bare address before canonicalIp, which refuses zone ids (`fe80::1%eth0`) and
  // IPv4-mapped forms (`::ffff:127.0.0.1`): these are local-only resolvers, and saying so tells the admin more.
  const [bare = ''] = address.split('%');
  if (isIP(bare) !== 0 && isLocalOnlyIp(bare)) return { reason: 'loopback or link-local' };
  const ip = canonicalIp(address);
  if (ip === null) return { reason: 'not an IP literal' };
  if (own.has(ip)) return { reason: 'own address' };
  if (kept.includes(ip)) return { reason: 'duplicate' };
  if (kept.length >= LIMITS.maxUpstreams) return { reason: OVER_LIMIT };
  return { ip };
}

/** The machine's own interface addresses (os.networkInterfaces), canonical. */
export function localAddresses(): string[] {
  const addresses = Object.values(networkInterfaces())
    .flatMap((infos) => infos ?? [])
    .map((info) => canonicalIp(info.address.split('%')[0] ?? ''))
    .filter((ip): ip is string => ip !== null);
  return sortUniqueIps(addresses);
}
