import { isIPv4 } from 'node:net';
import { adminDnsRecords, LB_DESCRIPTIONS, noAddressReason, type AdminName } from '../resolve/admin-records.js';
import { splitFamilies } from '../grammar/ip.js';
import { addressesOf, PRIVATE_API_NOTE } from '../resolve/record-set.js';
import { zoneOf } from './zone-file.js';
import type { ExtraRecord, LbName, NameRecord, Resolution } from '../model.js';

export const RECORD_FORMATS = ['zone', 'nsupdate', 'json'] as const;
export type RecordFormat = (typeof RECORD_FORMATS)[number];

export type AdminRecordType = 'A' | 'AAAA' | 'CNAME';

/** One resource record for the admin's DNS; `name` and a CNAME `value` are absolute, without the trailing dot. */
export interface AdminRecord {
  readonly name: string;
  readonly type: AdminRecordType;
  readonly ttl: number;
  readonly value: string;
  readonly lb: LbName;
  /** Why the records of this name are what they are (CNAME or not), when that is worth saying. */
  readonly note?: string;
  /** The object it comes from (`dnsrecord/NS/NAME`, `dnspolicy/NS/NAME gateway/NS/NAME`), for names other than the three LBs'. */
  readonly source?: string;
}

/** The records of one name, or none and why. */
export interface RecordGroup {
  readonly lb: LbName;
  readonly name: string;
  readonly records: readonly AdminRecord[];
  readonly note: string | undefined;
  /** Set for a name other than the three LBs': the object it comes from, for the comment above its records. */
  readonly source?: string;
  /** What the comment calls the object: `ingress controller DNSRecord`, `Gateway DNS`. */
  readonly kind?: string;
}

/** Where the DNSRecords' records stand, for the admin reading them. */
const DNSRECORD_NOTES = {
  Unmanaged: "dnsManagementPolicy Unmanaged: the ingress operator publishes nothing for it; create it in your DNS",
  Managed: 'dnsManagementPolicy Managed: the cluster\'s own CoreDNS serves it (lbdns); your DNS needs it for clients outside the cluster',
} as const;

/**
 * The records of the ingress controllers' DNSRecords as the admin's DNS must carry them, at
 * their recordTTL: a host name target as the CNAME the DNSRecord asks for, IP targets as A
 * and AAAA records. Unmanaged ones first: nothing else publishes them.
 */
const GATEWAY_NOTE = 'served inside the cluster by lbdns (Gateway DNS); your DNS needs it for clients outside the cluster';

/**
 * The records of the Gateway names lbdns serves, as the admin's DNS would carry them: a
 * load-balanced name's CNAME chain (this cluster's geo) then the addresses at its last name,
 * a simple name's addresses, each at the TTL lbdns serves it with.
 */
export function planGatewayGroups(served: readonly { readonly name: string; readonly source: string }[], names: readonly NameRecord[], clusterTtl: number, zones: readonly string[]): RecordGroup[] {
  // A chain's inner names are served names too: each record is printed once, with the first name that leads to it.
  const printed = new Set<string>();
  return served.flatMap(({ name, source }) => {
    const n = names.find((r) => r.name === name);
    if (n === undefined) return [];
    const record = (owner: string, type: AdminRecordType, value: string, ttl: number): AdminRecord => ({ name: owner, type, ttl, value, lb: 'ingress', note: GATEWAY_NOTE, source });
    const chain = (n.chain ?? []).map((c, i) => record(i === 0 ? name : c.owner, 'CNAME', c.target, c.ttl));
    const owner = n.addressOwner ?? name;
    const ttl = n.addressTtl ?? clusterTtl;
    // A chain that ends outside the zones (a load balancer's host name) ends at its CNAME: that name's addresses are its owner's to publish.
    const outside = zoneOf(owner, zones) === undefined;
    const addresses = outside ? [] : [...n.v4.map((ip) => record(owner, 'A', ip, ttl)), ...n.v6.map((ip) => record(owner, 'AAAA', ip, ttl))];
    const records = [...chain, ...addresses].filter((r) => {
      const key = `${r.name} ${r.type} ${r.value}`;
      return printed.has(key) ? false : (printed.add(key), true);
    });
    return records.length === 0 ? [] : [{ lb: 'ingress' as const, name, records, note: GATEWAY_NOTE, source, kind: 'Gateway DNS' }];
  });
}

export function planDnsRecordGroups(
  records: { readonly managed: readonly ExtraRecord[]; readonly unmanaged: readonly ExtraRecord[] },
  resolutions: ReadonlyMap<string, Resolution>,
  clusterTtl: number,
): RecordGroup[] {
  const group = (r: ExtraRecord, policy: keyof typeof DNSRECORD_NOTES): RecordGroup => {
    const note = DNSRECORD_NOTES[policy];
    const record = (type: AdminRecordType, value: string): AdminRecord => ({ name: r.name, type, ttl: r.ttl ?? clusterTtl, value, lb: 'ingress', note, source: r.source });
    const [only] = r.targets;
    if (r.targets.length === 1 && only?.kind === 'hostname') return { lb: 'ingress', name: r.name, records: [record('CNAME', only.hostname)], note, source: r.source, kind: 'ingress controller DNSRecord' };
    const { v4, v6 } = splitFamilies(addressesOf(r.targets, resolutions));
    const records = [...v4, ...v6].map((ip) => record(isIPv4(ip) ? 'A' : 'AAAA', ip));
    return { lb: 'ingress', name: r.name, records, note: records.length === 0 ? `not included: the DNSRecord has no usable target` : note, source: r.source, kind: 'ingress controller DNSRecord' };
  };
  // One answer a name, as CoreDNS serves it: two groups of one name would give a zone a CNAME
  // beside other records, or an update whose second delete takes out the first's records.
  return adminDnsRecords(records.managed, records.unmanaged).map(({ record, policy, givenBy }) => {
    const g = group(record, policy);
    return givenBy === undefined ? g : { ...g, records: [], note: `not included: ${record.name} is given with ${givenBy}` };
  });
}

export interface PlanOptions {
  readonly ttl: number;
  /** Point a name at its LB's host name instead of the host name's current addresses, where that is possible. */
  readonly cname: boolean;
}

function describe(n: AdminName): string {
  return n.endpoints.map((e) => (e.kind === 'ip' ? e.ip : e.hostname)).join(', ');
}

/**
 * A CNAME is possible only for an LB that is exactly one host name: a CNAME must be the only
 * record at its name (RFC 1034 §3.6.2) and cannot point at two targets, so an LB with IP
 * endpoints beside a host name, or with several host names, gets the current addresses of all.
 */
function noteFor(n: AdminName, cname: boolean): { cnameTo?: string; note?: string } {
  const own = lbNoteFor(n, cname);
  if (!n.viaInternal) return own;
  return { ...own, note: own.note === undefined ? PRIVATE_API_NOTE : `${PRIVATE_API_NOTE}; ${own.note}` };
}

function lbNoteFor(n: AdminName, cname: boolean): { cnameTo?: string; note?: string } {
  const hostnames = n.endpoints.filter((e) => e.kind === 'hostname');
  const only = n.endpoints.length === 1 && hostnames.length === 1 ? hostnames[0] : undefined;
  if (cname && only?.kind === 'hostname') {
    return { cnameTo: only.hostname, note: `CNAME to the load balancer's host name rather than its current addresses, which the cloud may change` };
  }
  if (hostnames.length === 0) return cname ? { note: 'A/AAAA: the load balancer has no host name to point a CNAME at' } : {};
  const refresh = 'these are its current addresses, which the cloud may change: run print-records again when the load balancer changes';
  if (!cname) return { note: `${refresh}, or use --cname` };
  return {
    note: `A/AAAA, not a CNAME: the load balancer has ${n.endpoints.length} endpoints (${describe(n)}) and a CNAME must be the only record at its name and name one target; ${refresh}`,
  };
}

/** The records for each name, in the order given; a name with neither an address nor a CNAME target gets none. */
export function planRecords(names: readonly AdminName[], opts: PlanOptions): RecordGroup[] {
  return names.map((n) => {
    const { cnameTo, note } = noteFor(n, opts.cname);
    const record = (type: AdminRecordType, value: string): AdminRecord => ({ name: n.name, type, ttl: opts.ttl, value, lb: n.lb, ...(note === undefined ? {} : { note }) });
    if (cnameTo !== undefined) return { lb: n.lb, name: n.name, records: [record('CNAME', cnameTo)], note };
    const records = [...n.v4, ...n.v6].map((ip) => record(isIPv4(ip) ? 'A' : 'AAAA', ip));
    if (records.length === 0) return { lb: n.lb, name: n.name, records, note: `not included: no address known, because ${noAddressReason(n)}` };
    return { lb: n.lb, name: n.name, records, note };
  });
}

const fqdn = (name: string): string => `${name}.`;
const rdata = (r: AdminRecord): string => (r.type === 'CNAME' ? fqdn(r.value) : r.value);

function parentOf(domain: string): string | undefined {
  const labels = domain.split('.');
  return labels.length > 2 ? labels.slice(1).join('.') : undefined;
}

function groupComment(g: RecordGroup): string[] {
  if (g.source !== undefined) return [`; ${g.name}: ${g.kind ?? 'from'} ${g.source.replace(/^dnsrecord\//, '')}${g.note === undefined ? '' : ` - ${g.note}`}`];
  const label = g.name.startsWith('*.') ? '*.apps' : g.name.split('.')[0];
  return [`; ${label}: ${LB_DESCRIPTIONS[g.lb]}${g.note === undefined ? '' : ` - ${g.note}`}`];
}

/** The records of one zone of the admin's: the cluster domain's, a Gateway zone's, or, for a name outside both, the zone that holds it. */
export interface ZoneSection {
  readonly zone: string;
  readonly groups: readonly RecordGroup[];
}

/**
 * The groups by the zone their names lie in, the cluster domain's first, then each Gateway
 * zone's, then each name outside them on its own: an update message may only hold names of
 * its zone (RFC 2136 3.4.1.3, NOTZONE), and a zone file loads only its own names.
 */
export function sectionsByZone(domain: string, gatewayZones: readonly string[], groups: readonly RecordGroup[]): ZoneSection[] {
  const sections = new Map<string, RecordGroup[]>([[domain, []], ...gatewayZones.map((z): [string, RecordGroup[]] => [z, []])]);
  const zoneFor = (name: string): string => zoneOf(name, gatewayZones) ?? zoneOf(name, [domain]) ?? name.replace(/^\*\./, '');
  const add = (zone: string, g: RecordGroup) => sections.set(zone, [...(sections.get(zone) ?? []), g]);
  for (const g of groups) {
    if (g.records.length === 0) add(zoneFor(g.name), g);
    // A chain's hops may lie in another zone than its first name: each record goes where its owner is.
    const byZone = new Map<string, AdminRecord[]>();
    for (const r of g.records) byZone.set(zoneFor(r.name), [...(byZone.get(zoneFor(r.name)) ?? []), r]);
    for (const [zone, records] of byZone) add(zone, { ...g, records });
  }
  return [...sections].filter(([, list]) => list.length > 0).map(([zone, list]) => ({ zone, groups: list }));
}

function sectionHeader(zone: string): string {
  const parent = parentOf(zone);
  return `; Add the records below to the zone that holds ${zone} (that zone itself${parent ? `, or a parent such as ${parent}` : ''}).`;
}

/**
 * RFC 1035 master-file lines with absolute owner names, led by `$TTL` (RFC 2308). Both the
 * `$TTL` and a TTL on every record, because the lines go to one of two places: as the start of
 * the cluster domain's own zone file, `$TTL` gives its SOA and NS the default TTL a zone file
 * needs (named warns "using RFC1035 TTL semantics" without one); pasted into a parent's zone
 * file, `$TTL` would change the default TTL of every later line there that has none of its own,
 * so the admin leaves it out and each record still keeps its TTL. The header says so.
 */
export function formatZone(domain: string, sections: readonly ZoneSection[], ttl: number): string {
  const records = sections.flatMap((z) => z.groups.flatMap((g) => g.records));
  const width = Math.max(0, ...records.map((r) => fqdn(r.name).length));
  const typeWidth = Math.max(0, ...records.map((r) => r.type.length));
  const lines = [
    `$TTL ${ttl}`,
    `; DNS records for the cluster ${domain}, from lbdns print-records.`,
    '; Names are absolute: no $ORIGIN is needed. Each record carries its TTL; the $TTL line above',
    '; is the default for lines without one, such as the SOA and NS of the cluster\'s own zone.',
    '; Pasting into a parent zone file? Leave the $TTL line out: there it would become the',
    '; default TTL of every later record in that file that has no TTL of its own.',
    '; Remove older records of these names first.',
  ];
  for (const { zone, groups } of sections) {
    lines.push(sectionHeader(zone));
    for (const g of groups) {
      lines.push(...groupComment(g));
      for (const r of g.records) lines.push(`${fqdn(r.name).padEnd(width)} ${String(r.ttl).padStart(5)} IN ${r.type.padEnd(typeWidth)} ${rdata(r)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export interface NsupdateOptions {
  /** `server` line in the form dnsServerAddress returns (`IP:PORT` or `[IPv6]:PORT`); absent: the admin adds one, or nsupdate asks the zone's SOA. */
  readonly server?: string | undefined;
}

function serverLine(server: string): string {
  const m = /^\[?(.+?)\]?:(\d+)$/.exec(server);
  return m ? `server ${m[1]} ${m[2]}` : `server ${server}`;
}

/**
 * An nsupdate script that replaces the A, AAAA and CNAME records of each name in one update
 * message per zone, so the names are never briefly without records and a switch between A and
 * CNAME works in either direction. It has no blank line: nsupdate sends at the first one.
 */
export function formatNsupdate(domain: string, sections: readonly ZoneSection[], opts: NsupdateOptions = {}): string {
  const lines = [
    `; nsupdate script for the cluster ${domain}, from lbdns print-records.`,
    '; Run it with your key, e.g.: nsupdate -k /etc/bind/update.key THIS_FILE',
    opts.server === undefined
      ? '; No server line: nsupdate sends each message to the primary named in its zone\'s SOA. Add "server HOST [PORT]" at the top to choose.'
      : '; Sent to the server below; nsupdate finds each message\'s zone from its first name.',
    '; One update message per zone: the old A, AAAA and CNAME records of each name are replaced atomically.',
    '; Keep it free of blank lines: nsupdate sends the message at the first one.',
  ];
  if (opts.server !== undefined) lines.push(serverLine(opts.server));
  for (const { zone, groups } of sections) {
    lines.push(`; The names in the zone that holds ${zone}:`);
    // Every name that gets a record is cleared (a chain's inner names too), once: a second delete
    // would take out what an earlier group of the message just added.
    const cleared = new Set<string>();
    for (const g of groups) {
      lines.push(...groupComment(g));
      for (const owner of new Set(g.records.map((r) => fqdn(r.name)))) {
        if (cleared.has(owner)) continue;
        cleared.add(owner);
        for (const type of ['A', 'AAAA', 'CNAME'] as const) lines.push(`update delete ${owner} ${type}`);
      }
      for (const r of g.records) lines.push(`update add ${fqdn(r.name)} ${r.ttl} ${r.type} ${rdata(r)}`);
    }
    // A section of comments alone (names left out) sends nothing: nsupdate refuses an empty message.
    if (groups.some((g) => g.records.length > 0)) lines.push('send');
  }
  return `${lines.join('\n')}\n`;
}

/** `[{name, type, ttl, value, lb, note?}]`, one entry per record. */
export function formatJson(groups: readonly RecordGroup[]): string {
  return `${JSON.stringify(groups.flatMap((g) => g.records), null, 2)}\n`;
}
