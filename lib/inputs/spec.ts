import type { RawConfig } from './config.js';
import { ValidationError } from '../errors.js';
import { DEFAULTS, LB_NAMES, LIMITS, ROLES, ROLE_TRAITS, type ClusterSpec, type Endpoint, type GatewaySpec, type LbName, type ListenSettings, type NodeEntry, type Role } from '../model.js';
import { canonicalIp, isThisHostIp, sortUniqueIps } from '../grammar/ip.js';
import { DNS_PORT, joinHostPort, parseDnsServer, parseHostPort, validateListen, validatePort } from '../grammar/host-port.js';
import {
  assertAtMost,
  assertUnique,
  nodeFqdn,
  nodeNameConflict,
  parseEndpoints,
  validateDnsName,
  validateDomain,
  validateGeoCode,
  validateIp,
  validateReload,
  validateTtl,
} from '../grammar/validate.js';

/** The flag that sets each LB, so messages name what the admin typed. */
export const LB_FLAGS: Readonly<Record<LbName, string>> = {
  api: '--api-lb',
  'api-int': '--api-int-lb',
  ingress: '--ingress-lb',
};

export function validateRole(value: unknown): Role {
  if (!ROLES.includes(value as Role)) {
    throw new ValidationError('--role', value, 'is not a role', `use one of: ${ROLES.join(', ')}`);
  }
  return value as Role;
}

/**
 * Node names compared as served (lower case, no trailing dot, `m0` = `m0.<domain>`), so no
 * spelling gets around the duplicate and 16-address rules; the shortest spelling is kept.
 */
function validateNodes(nodes: Record<string, readonly string[]>, domain: string): NodeEntry[] {
  const byFqdn = new Map<string, { name: string; ips: string[] }>();
  for (const [rawName, rawIps] of Object.entries(nodes)) {
    const name = validateDnsName('--node', rawName);
    const fqdn = nodeFqdn(name, domain);
    const conflict = nodeNameConflict(fqdn, domain);
    if (conflict !== undefined) throw new ValidationError('--node', rawName, conflict, 'rename the node record');
    const ips = rawIps.map((ip) => validateIp(`--node ${name}`, ip));
    const entry = byFqdn.get(fqdn);
    if (entry === undefined) byFqdn.set(fqdn, { name, ips });
    else {
      entry.ips.push(...ips);
      if (name.length < entry.name.length) entry.name = name;
    }
  }
  return [...byFqdn.values()]
    .map(({ name, ips }) => {
      assertUnique(`--node ${name}`, ips);
      assertAtMost(`--node ${name}`, ips.length, LIMITS.maxIpsPerName);
      return { name, ips: sortUniqueIps(ips) };
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * An upstream that is this CoreDNS itself loops every query it forwards back to it until its
 * sockets run out: its listen address on its port or, listening on every address, a loopback,
 * unspecified or own address on that port.
 */
export function refuseSelfForward(field: string, upstreams: readonly string[], listen: ListenSettings, ownAddresses: readonly string[]): void {
  const own = new Set(ownAddresses.flatMap((a) => canonicalIp(a) ?? []));
  const everyAddress = listen.address === undefined || listen.address === '0.0.0.0' || listen.address === '::';
  for (const upstream of upstreams) {
    const address = parseHostPort(upstream);
    const ip = address === null ? null : canonicalIp(address.host);
    if (address === null || ip === null || (address.port ?? DNS_PORT) !== listen.port) continue;
    if (everyAddress ? isThisHostIp(ip) || own.has(ip) : ip === listen.address) {
      const where = everyAddress ? `every address of this host, port ${listen.port}` : joinHostPort(listen.address as string, listen.port);
      throw new ValidationError(field, upstream, `is CoreDNS itself (it listens on ${where}): every query it forwards would come back to it`, 'give the resolvers CoreDNS is to forward to, or move --listen');
    }
  }
}

/**
 * Upstreams given explicitly are the admin's choice: validated, not filtered like resolv.conf's.
 * `IP:PORT` reaches a resolver on another port (a node-local one), as CoreDNS's forward allows.
 */
export function validateUpstreams(field: string, values: readonly string[]): string[] {
  const ips = values.map((v) => {
    const address = parseHostPort(v);
    if (address === null || !address.isIp) {
      throw new ValidationError(field, v, 'is not IP or IP:PORT', 'e.g. 10.0.0.2, 10.0.0.2:5353 or [fd00::2]:5353 (no host names, no leading zeros)');
    }
    return address.port === undefined || address.port === DNS_PORT ? address.host : joinHostPort(address.host, address.port);
  });
  assertUnique(field, ips);
  if (ips.length > LIMITS.maxUpstreams) {
    throw new ValidationError(field, ips.length, `entries exceed CoreDNS forward's limit of ${LIMITS.maxUpstreams}`);
  }
  if (ips.length === 0) throw new ValidationError(field, [], 'is empty', 'give at least one upstream resolver');
  return ips;
}

export interface GatewayFlags {
  readonly zones: readonly unknown[] | undefined;
  readonly geoCode: unknown;
  readonly ttl: unknown;
  readonly lbTtl: unknown;
}

/**
 * `--geo-code`: this cluster's geos, most wanted first, as Kuadrant's records write them: a
 * country and its continent (`IE,GEO-EU`), since Kuadrant's plugin matches `GEO-` codes against
 * the client's continent and the others against its country.
 */
function validateGeoCodes(value: unknown): string {
  const codes = (typeof value === 'string' ? value.split(',') : [value]).map((code) => validateGeoCode('--geo-code', code));
  if (codes.includes('*')) throw new ValidationError('--geo-code', value, 'holds the default-geo marker *, not a geo', 'leave --geo-code out to answer with the default geo');
  const twice = codes.find((code, i) => codes.findIndex((c) => c.toLowerCase() === code.toLowerCase()) !== i);
  if (twice !== undefined) throw new ValidationError('--geo-code', value, `names ${twice} twice (geo codes match without regard to case)`, 'list each geo once');
  return codes.join(',');
}

/** --gateway-zone, --geo-code and the TTLs: zones are domains (at least two labels), each once; the rest need a zone. */
export function validateGatewayFlags(flags: GatewayFlags): GatewaySpec | undefined {
  const valid = (flags.zones ?? []).map((z) => validateDomain('--gateway-zone', z));
  assertUnique('--gateway-zone', valid);
  const geo = flags.geoCode === undefined ? undefined : validateGeoCodes(flags.geoCode);
  const ttl = flags.ttl === undefined ? DEFAULTS.gatewayTtls.ttl : validateTtl('--gateway-ttl', flags.ttl);
  const loadBalancedTtl = flags.lbTtl === undefined ? DEFAULTS.gatewayTtls.loadBalancedTtl : validateTtl('--gateway-lb-ttl', flags.lbTtl);
  if (valid.length === 0) {
    for (const [flag, value] of [['--geo-code', flags.geoCode], ['--gateway-ttl', flags.ttl], ['--gateway-lb-ttl', flags.lbTtl]] as const) {
      if (value !== undefined) throw new ValidationError(flag, value, 'has no effect without --gateway-zone', 'add --gateway-zone ZONE');
    }
    return undefined;
  }
  return { zones: valid, geoCode: geo, ttls: { ttl, loadBalancedTtl }, owners: [] };
}

/**
 * Validates a config into a ClusterSpec. LB lists may still be empty here: in cluster mode
 * the cluster fills them; `requireLbs` is the check for when nothing else will.
 */
export function specFromConfig(raw: RawConfig, upstreams: readonly string[]): ClusterSpec {
  if (raw.domain === undefined) throw new ValidationError('--domain', undefined, 'is required', "give the cluster's base domain, e.g. --domain mycluster.example.com, or try the built-in example with --example");
  const lb = (name: LbName, values: readonly string[] | undefined): Endpoint[] => parseEndpoints(LB_FLAGS[name], values ?? []);
  const domain = validateDomain('--domain', raw.domain);
  return {
    domain,
    role: validateRole(raw.role ?? 'control-plane'),
    lbs: {
      api: lb('api', raw.loadBalancers?.api),
      'api-int': lb('api-int', raw.loadBalancers?.apiInt),
      ingress: lb('ingress', raw.loadBalancers?.ingress),
    },
    extraRecords: [],
    nodes: validateNodes(raw.nodes ?? {}, domain),
    upstreams,
    ttl: validateTtl('--ttl', raw.ttl ?? DEFAULTS.ttl),
    ...listenOf(raw),
    reload: validateReload(raw.reload?.interval ?? DEFAULTS.reload.intervalSeconds, raw.reload?.jitter ?? DEFAULTS.reload.jitterSeconds),
    ...gatewayOf(raw, domain),
  };
}

/**
 * What the merged flags and config file say that needs no cluster to judge, checked at once:
 * a bad value is exit 2 before the API server is waited for, not after (specFromConfig judges
 * the rest, and the nodes again, once the cluster has given the domain).
 */
export function checkLocalSettings(raw: RawConfig): void {
  for (const lb of LB_NAMES) parseEndpoints(LB_FLAGS[lb], raw.loadBalancers?.[LB_KEYS[lb]] ?? []);
  if (raw.upstreams !== undefined) validateUpstreams('--upstream', raw.upstreams);
  for (const server of raw.dnsServers ?? []) parseDnsServer(server);
  validateTtl('--ttl', raw.ttl ?? DEFAULTS.ttl);
  listenOf(raw);
  validateReload(raw.reload?.interval ?? DEFAULTS.reload.intervalSeconds, raw.reload?.jitter ?? DEFAULTS.reload.jitterSeconds);
  validateGatewayFlags({ zones: raw.gatewayZones, geoCode: raw.geoCode, ttl: raw.gatewayTtl, lbTtl: raw.gatewayLbTtl });
  if (raw.domain !== undefined) validateNodes(raw.nodes ?? {}, validateDomain('--domain', raw.domain));
  else for (const [name, ips] of Object.entries(raw.nodes ?? {})) for (const ip of ips) validateIp(`--node ${validateDnsName('--node', name)}`, ip);
}

/** The server block's address and the health and ready ports: three different ports. */
export function listenOf(raw: RawConfig): Pick<ClusterSpec, 'listen' | 'healthPort' | 'readyPort'> {
  const health = raw.healthPort === undefined ? DEFAULTS.healthPort : validatePort('--health-port', raw.healthPort);
  const ready = raw.readyPort === undefined ? DEFAULTS.readyPort : validatePort('--ready-port', raw.readyPort);
  if (health === ready) {
    const [flag, value] = raw.readyPort === undefined ? ['--health-port', raw.healthPort] : ['--ready-port', raw.readyPort];
    throw new ValidationError(flag, value, `is the ${flag === '--ready-port' ? 'health' : 'ready'} port too`, 'give /health and /ready different ports');
  }
  if (raw.listen === undefined) {
    // CoreDNS binds both with SO_REUSEPORT, so it starts and splits TCP between DNS and HTTP.
    for (const [flag, value, port] of [['--health-port', raw.healthPort, health], ['--ready-port', raw.readyPort, ready]] as const) {
      if (port === DEFAULTS.listen.port) throw new ValidationError(flag, value, `is the DNS port (--listen :${DEFAULTS.listen.port}, the default)`, 'choose another port');
    }
  }
  return {
    ...(raw.listen === undefined ? {} : { listen: validateListen('--listen', raw.listen, { health, ready }) }),
    ...(raw.healthPort === undefined ? {} : { healthPort: health }),
    ...(raw.readyPort === undefined ? {} : { readyPort: ready }),
  };
}

/**
 * A Gateway zone gets a CoreDNS server block of its own, which takes every query under it: a
 * zone holding the cluster's domain, its api names or `*.apps` would take theirs away.
 */
function gatewayOf(raw: RawConfig, domain: string): { gateway?: GatewaySpec } {
  const gateway = validateGatewayFlags({ zones: raw.gatewayZones, geoCode: raw.geoCode, ttl: raw.gatewayTtl, lbTtl: raw.gatewayLbTtl });
  for (const zone of gateway?.zones ?? []) {
    // The node names' reverse records (PTR, from hosts) live there: a Gateway zone's block would answer them NXDOMAIN.
    if (/(^|\.)(in-addr|ip6)\.arpa$/.test(zone) || zone === 'arpa') {
      throw new ValidationError('--gateway-zone', zone, 'is a reverse-lookup zone, whose PTR queries for the nodes CoreDNS would then send to the Gateway zone\'s server block', 'serve Gateway names from a forward zone, e.g. gw.example.com');
    }
    const covered = [domain, `api.${domain}`, `api-int.${domain}`, `apps.${domain}`].find((name) => zone === name || (name === domain ? domain.endsWith(`.${zone}`) : zone.endsWith(`.${name}`)));
    if (covered !== undefined) {
      throw new ValidationError('--gateway-zone', zone, `${covered === domain ? 'is or contains the cluster domain' : `is or lies under ${covered}`}, whose names CoreDNS would then send to the Gateway zone's server block`, `serve Gateway names from a zone of their own, e.g. gw.${domain} or another domain`);
    }
  }
  return gateway ? { gateway } : {};
}

/** Fails naming every LB the role cannot serve without; api is never one (private clusters have none). */
export function requireLbs(spec: ClusterSpec, needs: readonly LbName[] = ROLE_TRAITS[spec.role].requires): void {
  const missing = needs.filter((name) => spec.lbs[name].length === 0);
  if (missing.length > 0) {
    throw new ValidationError(
      missing.map((name) => LB_FLAGS[name]).join(', '),
      undefined,
      `is required for role ${spec.role}`,
      'give an IP or host name for each (or a --config file, or a cluster to read them from)',
    );
  }
}

const LB_KEYS: Readonly<Record<LbName, 'api' | 'apiInt' | 'ingress'>> = { api: 'api', 'api-int': 'apiInt', ingress: 'ingress' };

/** The settings in `raw` that `role` serves nothing from, named as flags. */
export function unusedByRole(role: Role, raw: RawConfig): string[] {
  const traits = ROLE_TRAITS[role];
  const unused = Object.entries(LB_FLAGS)
    .filter(([lb]) => !traits.serves.includes(lb as LbName) && raw.loadBalancers?.[LB_KEYS[lb as LbName]] !== undefined)
    .map(([, flag]) => flag);
  if (!traits.clusterNames && raw.nodes !== undefined) unused.push('--node');
  return unused;
}

/** `api-int, *.apps`: what a role's Corefile answers, for messages. */
export function roleServes(role: Role): string {
  const traits = ROLE_TRAITS[role];
  return [...traits.serves.map((lb) => (lb === 'ingress' ? '*.apps' : lb)), ...(traits.clusterNames ? ['node names', 'DNSRecords'] : [])].join(', ');
}
