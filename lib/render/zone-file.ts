import { canonicalIp, ipFamily } from '../grammar/ip.js';
import { validateDnsName } from '../grammar/validate.js';
import type { NameRecord, RecordSet } from '../model.js';

/*
 * Gateway names are served by CoreDNS's `file` plugin from one zone file per Gateway zone, in
 * a server block of that zone: queries for the cluster's own names never reach it, and the
 * plugin re-reads the file when its SOA serial changes, without a Corefile reload (which would
 * empty the cache and start every plugin anew on every node). Each name gets its own records
 * only — a CNAME's target answers for itself — and the plugin assembles a chain, each record
 * once, chasing a target outside the zone through the server's upstreams.
 */

/** The zone a name lies in: the longest one that is it or an ancestor of it; undefined: none. */
export function zoneOf(name: string, zones: readonly string[]): string | undefined {
  const bare = name.startsWith('*.') ? name.slice(2) : name;
  let best: string | undefined;
  for (const zone of zones) {
    if ((bare === zone || bare.endsWith(`.${zone}`)) && (best === undefined || zone.length > best.length)) best = zone;
  }
  return best;
}

/** The names of a record set split into those of each zone, and the rest (in their order). */
export function splitByZone(names: readonly NameRecord[], zones: readonly string[]): { readonly rest: readonly NameRecord[]; readonly byZone: ReadonlyMap<string, readonly NameRecord[]> } {
  if (zones.length === 0) return { rest: names, byZone: new Map() };
  const rest: NameRecord[] = [];
  const byZone = new Map<string, NameRecord[]>(zones.map((z) => [z, []]));
  for (const n of names) {
    const zone = zoneOf(n.name, zones);
    if (zone === undefined) rest.push(n);
    else (byZone.get(zone) as NameRecord[]).push(n);
  }
  return { rest, byZone };
}

/**
 * The records of a zone, one line each in the record set's order (which is deterministic), without
 * the SOA: the part whose change is a change of the zone. A name that starts a chain answers its
 * first hop only.
 */
export function zoneRecords(records: readonly NameRecord[], clusterTtl: number): string {
  const lines: string[] = [];
  for (const r of records) {
    const hop = r.chain?.[0];
    if (hop !== undefined) {
      lines.push(`${r.name}. ${hop.ttl} IN CNAME ${hop.target}.`);
      continue;
    }
    addressLines(lines, r.name, r.addressTtl ?? clusterTtl, r.v4, r.v6);
  }
  return lines.join('\n');
}

/** A name's A and AAAA lines, as zoneOwners reads them back. */
function addressLines(lines: string[], name: string, ttl: number, v4: readonly string[], v6: readonly string[]): void {
  for (const ip of v4) lines.push(`${name}. ${ttl} IN A ${ip}`);
  for (const ip of v6) lines.push(`${name}. ${ttl} IN AAAA ${ip}`);
}

/**
 * Each Gateway zone's records as zoneRecords gives them: what decides whether its file changes.
 * A node whose name lies in a zone is answered there too: CoreDNS sends that name's queries to
 * the zone's server block, which the `hosts` entry of the main block never sees. A name of
 * `unanswered` is written with no address, so the zone's wildcard does not answer it.
 */
export function renderZones(recordSet: RecordSet): ReadonlyMap<string, string> {
  const zones = recordSet.gatewayZones ?? [];
  const { byZone } = splitByZone(recordSet.names, zones);
  const besideRecords = new Map<string, string[]>();
  // An RFC 3597 record of a private type with no data: the name exists, with no A or AAAA, so a wildcard no longer answers it.
  for (const name of recordSet.unanswered ?? []) {
    const zone = zoneOf(name, zones);
    if (zone === undefined) continue;
    const lines = besideRecords.get(zone) ?? [];
    besideRecords.set(zone, lines);
    lines.push(`${name}. ${NEGATIVE_TTL} IN TYPE65534 \\# 0`);
  }
  for (const n of recordSet.nodes) {
    for (const name of new Set([n.name, n.fqdn])) {
      const zone = name.includes('.') ? zoneOf(name, zones) : undefined;
      if (zone === undefined) continue;
      const lines = besideRecords.get(zone) ?? [];
      besideRecords.set(zone, lines);
      addressLines(lines, name, recordSet.ttl, n.v4, n.v6);
    }
  }
  return new Map(
    [...byZone].map(([zone, names]) => {
      const records = zoneRecords(names, recordSet.ttl);
      const beside = besideRecords.get(zone) ?? [];
      return [zone, beside.length === 0 ? records : [records, ...beside].filter((part) => part !== '').join('\n')];
    }),
  );
}

/** How long a resolver may cache "no such name" under the zone (the SOA minimum). */
const NEGATIVE_TTL = 30;

/** The SOA line that opens a zone file; the serial tells CoreDNS the file changed. */
function soaLine(zone: string, serial: number): string {
  return `${zone}. ${NEGATIVE_TTL} IN SOA ns.lbdns.invalid. hostmaster.lbdns.invalid. ${serial} 3600 600 86400 ${NEGATIVE_TTL}`;
}

/** The SOA of the cluster's own names, given with an empty answer from the Corefile's templates: only its TTL and minimum are read. */
export const negativeSoa = (domain: string): string => soaLine(domain, 1);

/** The apex's NS, named as the SOA names it: without one, the file plugin answers an NS query with an empty NOERROR that has no SOA. */
const nsLine = (zone: string): string => `${zone}. ${NEGATIVE_TTL} IN NS ns.lbdns.invalid.`;

/** What comes before the records: a comment, the SOA and the apex's NS. */
const zoneHeader = (zone: string, serial: number): string => `; Generated by lbdns: the Gateway names of ${zone}, served by CoreDNS's file plugin. Do not edit.\n${soaLine(zone, serial)}\n${nsLine(zone)}\n`;

/** A whole zone file: the header, the records. */
export function formatZoneFile(zone: string, serial: number, records: string): string {
  return `${zoneHeader(zone, serial)}${records}${records === '' ? '' : '\n'}`;
}

/** Whether `text` is formatZoneFile(zone, serial, records), compared in place: a copy of 10,000 hosts' file is 1.7 MB more garbage on every change. */
export function isZoneFile(text: string, zone: string, serial: number, records: string): boolean {
  const header = zoneHeader(zone, serial);
  const tail = records === '' ? 0 : 1;
  return text.length === header.length + records.length + tail && text.startsWith(header) && text.startsWith(records, header.length) && (tail === 0 || text.endsWith('\n'));
}

/**
 * The serial and records of a zone file lbdns wrote; undefined for any other text. Sliced, not
 * split: the file holds every Gateway name. No regular expression runs on it or on a slice of
 * it: V8 keeps the subject of the last match alive (RegExp.lastMatch), the whole 1.7 MB file
 * of 10,000 hosts until the next match anywhere.
 */
export function parseZoneFile(text: string): { readonly serial: number; readonly records: string } | undefined {
  const first = text.indexOf('\n');
  const second = first < 0 ? -1 : text.indexOf('\n', first + 1);
  if (!text.startsWith('; Generated by lbdns') || second < 0) return undefined;
  // NAME TTL IN SOA MNAME RNAME SERIAL REFRESH RETRY EXPIRE MINIMUM
  const soa = text.slice(first + 1, second).split(' ');
  const serial = soa[6] ?? '';
  if (soa[2] !== 'IN' || soa[3] !== 'SOA' || serial === '' || [...serial].some((c) => c < '0' || c > '9')) return undefined;
  // A zone file of an earlier release, still on disk after an upgrade, has no NS line: its records follow the SOA.
  const third = text.indexOf('\n', second + 1);
  const records = text.slice(second + 1, third < 0 ? undefined : third).endsWith(' IN NS ns.lbdns.invalid.') ? (third < 0 ? '' : text.slice(third + 1)) : text.slice(second + 1);
  return { serial: Number(serial), records: records.endsWith('\n') ? records.slice(0, -1) : records };
}

/**
 * The serial of a zone file's next version: the time in seconds, or one more than the last
 * when that is not lower, so two changes within a second still differ (CoreDNS reloads on any
 * serial other than the one it holds). Kept within 32 bits as the SOA field is.
 */
export function nextSerial(previous: number | undefined, nowSeconds: number): number {
  const next = previous === undefined || nowSeconds > previous ? nowSeconds : previous + 1;
  return next % 2 ** 32;
}

/** One owner's records in a zone file lbdns wrote. */
export interface ZoneOwner {
  cname?: { readonly target: string; readonly ttl: number };
  readonly v4: string[];
  readonly v6: string[];
  ttl?: number;
}

/** RFC 2181's TTL range. */
const MAX_TTL = 2 ** 31 - 1;

const dnsName = (text: string): string | undefined => {
  try {
    return validateDnsName('zone file', text, { allowWildcard: true });
  } catch {
    return undefined;
  }
};

/**
 * The records zoneRecords wrote (parseZoneFile's `records`), by owner without the trailing dot:
 * what a zone file served, when nothing else can say it. A line of another shape, or whose name,
 * TTL or data lbdns would not write (a file cut short, edited by hand), is skipped: served again,
 * it would make CoreDNS refuse the whole zone.
 */
export function zoneOwners(records: string): Map<string, ZoneOwner> {
  const owners = new Map<string, ZoneOwner>();
  for (const line of records.split('\n')) {
    const found = /^(\S+)\. ([0-9]+) IN (A|AAAA|CNAME) (\S+)$/.exec(line);
    if (found === null) continue;
    const [, written, ttlText, type, data] = found as unknown as [string, string, string, string, string];
    const name = dnsName(written);
    const ttl = Number(ttlText);
    if (name !== written || ttl > MAX_TTL) continue;
    if (type === 'CNAME') {
      const target = data.endsWith('.') ? dnsName(data.slice(0, -1)) : undefined;
      if (target === undefined || target.startsWith('*.')) continue;
      const owner = owners.get(name) ?? { v4: [], v6: [] };
      owners.set(name, owner);
      owner.cname ??= { target, ttl };
      continue;
    }
    const ip = canonicalIp(data);
    if (ip === null || ipFamily(ip) !== (type === 'A' ? 4 : 6)) continue;
    const owner = owners.get(name) ?? { v4: [], v6: [] };
    owners.set(name, owner);
    (type === 'A' ? owner.v4 : owner.v6).push(ip);
    owner.ttl = ttl;
  }
  return owners;
}
