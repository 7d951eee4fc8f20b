import { adminNames } from '../resolve/admin-records.js';
import { EXIT, MissingDataError, ValidationError } from '../errors.js';
import { formatJson, formatNsupdate, formatZone, planDnsRecordGroups, planGatewayGroups, planRecords, RECORD_FORMATS, sectionsByZone, type RecordFormat } from '../render/records-format.js';
import { dnsServerAddress } from '../grammar/host-port.js';
import type { ClusterFlags } from './cluster.js';
import { everyLb, loggerFor, type CommandInputs } from './io.js';
import { gatherOnce } from './one-shot.js';
import { checkGatewayAsked, dnsRecordsBeside, lbsOf, parseRecordNames } from './record-names.js';

export interface PrintRecordsOptions extends CommandInputs {
  readonly format: string;
  /** Comma-separated subset of api,api-int,apps,dnsrecords,gateway; default all. */
  readonly names?: string | undefined;
  readonly cname: boolean;
  /** `server` line for the nsupdate format: IP, IP:PORT or [IPv6]:PORT. */
  readonly nsupdateServer?: string | undefined;
  readonly cluster?: ClusterFlags | undefined;
}

function parseFormat(value: string): RecordFormat {
  if (!(RECORD_FORMATS as readonly string[]).includes(value)) {
    throw new ValidationError('--format', value, 'is not a record format', `use one of ${RECORD_FORMATS.join(', ')}`);
  }
  return value as RecordFormat;
}

function parseNsupdateServer(value: string | undefined, format: RecordFormat): string | undefined {
  if (value === undefined) return undefined;
  if (format !== 'nsupdate') throw new ValidationError('--nsupdate-server', value, `has no effect with --format ${format}`, 'use it with --format nsupdate');
  const address = dnsServerAddress(value);
  if (address === null) throw new ValidationError('--nsupdate-server', value, 'is not a DNS server address', 'use IP, IP:PORT or [IPv6]:PORT, e.g. 192.0.2.53 or 192.0.2.53:53');
  return address;
}

/**
 * Prints the records the admin's own DNS needs, from the same sources as every command: api,
 * api-int and *.apps, and with a cluster every ingress controller's DNSRecord.
 */
export async function printRecordsCommand(opts: PrintRecordsOptions): Promise<number> {
  const format = parseFormat(opts.format);
  const server = parseNsupdateServer(opts.nsupdateServer, format);
  const wanted = parseRecordNames(opts.names, 'print-records');
  const log = loggerFor(opts.io);
  const lbs = new Set(lbsOf(wanted));
  const state = await gatherOnce(everyLb(opts), opts.cluster, log, { upstreams: false, needs: [...lbs], check: (raw) => checkGatewayAsked(opts.names, wanted, raw) });
  const lbGroups = planRecords(adminNames(state.spec, state.resolutions), { ttl: state.spec.ttl, cname: opts.cname }).filter((g) => lbs.has(g.lb));
  const lbNames = new Set(adminNames(state.spec, state.resolutions).map((n) => n.name));
  const dnsRecordGroups = wanted.includes('dnsrecords') ? planDnsRecordGroups({ managed: dnsRecordsBeside(state.spec.extraRecords, lbNames, state.spec, log), unmanaged: dnsRecordsBeside(state.unmanaged, lbNames, state.spec, log) }, state.resolutions, state.spec.ttl) : [];
  const gatewayGroups = wanted.includes('gateway') ? planGatewayGroups(state.gateway.served, state.recordSet.names, state.spec.ttl, state.spec.gateway?.zones ?? []) : [];
  const groups = [...lbGroups, ...dnsRecordGroups, ...gatewayGroups];
  const left = groups.filter((g) => g.records.length === 0);
  if (left.length === groups.length) {
    throw new MissingDataError(`nothing to print: ${groups.length === 0 ? 'no name of --names has records' : left.map((g) => `${g.name} (${g.note ?? ''})`).join('; ')}`);
  }
  for (const g of left) log.warn('name left out of the records', { name: g.name, reason: g.note });
  const sections = sectionsByZone(state.spec.domain, state.spec.gateway?.zones ?? [], groups);
  const text = format === 'zone' ? formatZone(state.spec.domain, sections, state.spec.ttl) : format === 'nsupdate' ? formatNsupdate(state.spec.domain, sections, { server }) : formatJson(groups);
  opts.io.stdout.write(text);
  return EXIT.ok;
}
