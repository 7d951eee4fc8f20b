import { SERVED_BEFORE, type NameRecord } from '../model.js';
import { addressesServedFor, templateAnswers, zoneFilesNamed } from '../render/corefile-check.js';
import { OUTPUT_FILE_MAX_BYTES, readInputFileIfPresent } from '../inputs/admin-file.js';
import { parseZoneFile, zoneOwners, type ZoneOwner } from '../render/zone-file.js';
import { matchFor, specificityOrder } from '../resolve/specificity.js';

/** How far a chain is followed in a zone file: CoreDNS's file plugin gives up after 8 hops. */
const MAX_HOPS = 8;

/**
 * The names the Corefile and the Gateway zone files on disk answer, with their addresses: what
 * a process that starts again served last. A name whose host names do not resolve at the start
 * (the upstream DNS failing as the pod restarts) keeps these, as it keeps what it served itself
 * later, instead of being dropped from the first files written. No file, or one that does not
 * read: nothing.
 */
export async function readServedBefore(corefile: string, zoneFiles: ReadonlyMap<string, string>): Promise<readonly NameRecord[]> {
  const text = await readBack(corefile, '--out');
  if (text === undefined) return [];
  let names: NameRecord[];
  let named: ReadonlySet<string>;
  try {
    names = templateNames(text);
    named = new Set(zoneFilesNamed(text));
  } catch {
    return [];
  }
  for (const path of zoneFiles.values()) {
    // A zone file the Corefile does not name was not served: one left from a zone dropped since holds records nobody answered.
    if (!named.has(path)) continue;
    const zone = parseZoneFile((await readBack(path, 'a Gateway zone file')) ?? '');
    if (zone !== undefined) names.push(...zoneNames(zoneOwners(zone.records)));
  }
  return specificityOrder(names);
}

/** A file lbdns wrote, or nothing when it is not there or does not read as one (a FIFO, over the size an output may have): never waited on. */
function readBack(path: string, flag: string): Promise<string | undefined> {
  return readInputFileIfPresent(path, { flag, maxBytes: OUTPUT_FILE_MAX_BYTES }).catch(() => undefined);
}

/** A template pair's name is its zone, or `*.` and its zone for a wildcard: the one whose match is the block's. */
function templateNames(text: string): NameRecord[] {
  return templateAnswers(text).flatMap((t) => {
    const name = [t.zone, `*.${t.zone}`].find((n) => t.matches.length === 1 && matchFor(n).match === t.matches[0]);
    if (name === undefined || t.v4.length + t.v6.length === 0) return [];
    return [{ name, v4: t.v4, v6: t.v6, source: SERVED_BEFORE, ...(t.ttl === undefined ? {} : { addressTtl: t.ttl }) }];
  });
}

/** Each owner of a zone file as a record: its chain followed through the file, with the addresses at its end. */
function zoneNames(owners: ReadonlyMap<string, ZoneOwner>): NameRecord[] {
  return [...owners].map(([name, owner]) => {
    const chain: { owner: string; target: string; ttl: number }[] = [];
    let at = name;
    for (let hop = owners.get(at)?.cname; hop !== undefined && chain.length < MAX_HOPS; hop = owners.get(at)?.cname) {
      chain.push({ owner: at, target: hop.target, ttl: hop.ttl });
      at = hop.target;
    }
    // A chain that leaves the zone ends in addresses CoreDNS asks the upstreams for: none here.
    const end = owners.get(at);
    const base = { name, v4: end?.v4 ?? [], v6: end?.v6 ?? [], source: SERVED_BEFORE, chain };
    const ttl = end?.ttl ?? owner.cname?.ttl;
    return { ...base, ...(chain.length > 0 ? { addressOwner: at } : {}), ...(ttl === undefined ? {} : { addressTtl: ttl }) };
  });
}

/**
 * The addresses the Corefile at `corefile` answers `host` with: where the kubeconfig names a
 * name lbdns serves, what lbdns connects to before it can ask the DNS it configures. None when
 * there is no such file, or it does not read.
 */
export async function corefileServedFor(corefile: string, host: string): Promise<string[]> {
  const text = await readBack(corefile, '--out');
  try {
    return text === undefined ? [] : addressesServedFor(text, host);
  } catch {
    return [];
  }
}
