import type { Endpoint } from '../model.js';
import { zoneOf } from '../render/zone-file.js';
import { adminDnsRecords, adminNames, noAddressReason } from '../resolve/admin-records.js';
import { checkServers, formatCheckTable, type CheckRow, type CheckTarget } from '../sinks/dns-check.js';
import { ConfigError, EXIT, MismatchError, MissingDataError, ValidationError } from '../errors.js';
import { HostResolver } from '../resolve/host-resolver.js';
import { DNS_PORT, joinHostPort, parseHostPort } from '../grammar/host-port.js';
import { canonicalIp } from '../grammar/ip.js';
import { parseDurationMs } from '../grammar/go-duration.js';
import { validateDnsName } from '../grammar/validate.js';
import type { ClusterFlags } from './cluster.js';
import { everyLb, loggerFor, type CommandInputs } from './io.js';
import { gatherOnce } from './one-shot.js';
import { checkGatewayAsked, dnsRecordsBeside, lbsOf, parseRecordNames, RECORD_NAME_LB } from './record-names.js';


const CHECK_OUTPUTS = ['table', 'json'] as const;
export type CheckOutput = (typeof CHECK_OUTPUTS)[number];

export interface CheckDnsOptions extends CommandInputs {
  /** The admin's DNS servers, IP[:PORT] or HOST[:PORT] each; none: the system resolvers. */
  readonly servers?: readonly string[] | undefined;
  /** Comma-separated subset of api,api-int,apps,dnsrecords; default all. */
  readonly names?: string | undefined;
  /** Report mismatches but exit 0. */
  readonly warnOnly: boolean;
  readonly output: string;
  /** Per try, a Go duration such as `2s` or `500ms`, or whole seconds. */
  readonly timeout: string;
  /** Name asked under apps instead of a random one: a label (`console-openshift-console`) or a full name. */
  readonly appsHost?: string | undefined;
  readonly cluster?: ClusterFlags | undefined;
}

const TRIES = 2;
const MIN_TIMEOUT_MS = 50;
const MAX_TIMEOUT_MS = 60_000;

function parseOutput(value: string): CheckOutput {
  if (!(CHECK_OUTPUTS as readonly string[]).includes(value)) throw new ValidationError('--output', value, 'is not an output format', `use one of ${CHECK_OUTPUTS.join(', ')}`);
  return value as CheckOutput;
}

/** A DNS server to ask, and how its rows name it: the address, or `HOST (address)`. */
interface AskedServer {
  readonly address: string;
  readonly label: string;
}

type ServerArg = { readonly kind: 'ip'; readonly address: string } | { readonly kind: 'host'; readonly host: string; readonly port: number };

const SERVER_HINT = 'use IP, IP:PORT, [IPv6]:PORT, HOST or HOST:PORT with a port from 1 to 65535, e.g. 192.0.2.53, [fd00::53]:53 or dns1.example.com:53';
function parseServerArg(value: string): ServerArg {
  const server = parseHostPort(value, { names: true });
  if (server === null) throw new ValidationError('--server', value, 'is not a DNS server address', SERVER_HINT);
  const port = server.port ?? DNS_PORT;
  return server.isIp ? { kind: 'ip', address: joinHostPort(server.host, port) } : { kind: 'host', host: server.host, port };
}

/** The host name a name's addresses all come from, when its targets are that one host name. */
function ownHostname(targets: readonly Endpoint[]): string | undefined {
  const [only, ...rest] = targets;
  return rest.length === 0 && only?.kind === 'hostname' ? only.hostname : undefined;
}

/**
 * The servers to ask, each once. A host name is resolved once, by the system resolver (so
 * /etc/hosts counts), and every address it has is a server of its own: the admin named a
 * server, and whichever address a client reaches must answer right.
 */
async function resolveServers(values: readonly string[] | undefined): Promise<AskedServer[]> {
  // Loaded here, not at the top: every command shares one bundle, and renders never ask DNS.
  const { getServers, promises: { lookup } } = await import('node:dns');
  if (values === undefined || values.length === 0) {
    const system = getServers();
    if (system.length === 0) throw new ConfigError('the system has no DNS resolver configured (resolv.conf names no nameserver); pass --server with your DNS servers');
    return system.map((address) => ({ address, label: address }));
  }
  const args = values.map((v) => ({ value: v, arg: parseServerArg(v) }));
  const servers = new Map<string, AskedServer>();
  for (const { value, arg } of args) {
    if (arg.kind === 'ip') {
      if (!servers.has(arg.address)) servers.set(arg.address, { address: arg.address, label: arg.address });
      continue;
    }
    let found: { address: string }[];
    try {
      found = await lookup(arg.host, { all: true });
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      throw new ValidationError('--server', value, `is a host name the system resolver cannot resolve (${typeof code === 'string' ? code : String(err)})`, 'give the DNS server as an IP, or as a name this machine resolves');
    }
    for (const { address: ip } of found) {
      const address = joinHostPort(canonicalIp(ip) ?? ip, arg.port);
      if (!servers.has(address)) servers.set(address, { address, label: `${arg.host} (${address})` });
    }
  }
  return [...servers.values()];
}

/** A random label by default, so a `*.apps` that exists only as a few specific names is not mistaken for the wildcard. */
function appsQuery(domain: string, appsHost: string | undefined): string {
  const apps = `apps.${domain}`;
  if (appsHost === undefined) return randomUnder(apps);
  return appsHost.endsWith(`.${apps}`) ? appsHost : `${appsHost}.${apps}`;
}

const randomUnder = (zone: string): string => `lbdns-check-${Math.random().toString(16).slice(2, 10).padEnd(8, '0')}.${zone}`;

function mismatchSummary(bad: readonly CheckRow[], total: number): string {
  const each = bad.map((r) => `${r.query} at ${r.server}: ${r.verdict}${r.detail ? ` (${r.detail})` : ''}`).join('; ');
  const advice = [
    bad.some((r) => r.verdict !== 'unreachable' && r.verdict !== 'error answer') ? 'put the records "lbdns print-records" prints into these DNS servers' : '',
    bad.some((r) => r.verdict === 'error answer') ? 'a server answered with an error (REFUSED, SERVFAIL): check that it serves these names to this client' : '',
    bad.some((r) => r.verdict === 'unreachable') ? 'check that the unreachable servers answer from here (address, firewall, their upstreams) or raise --timeout' : '',
  ].filter((s) => s !== '');
  return `${bad.length} of ${total} checks do not match the load balancers: ${each}. To fix: ${advice.join('; ')}`;
}

/**
 * Asks each of the admin's DNS servers for api, api-int and a name under apps, and compares
 * the answers with the LB addresses the cluster sees. Exit 3 on any difference unless warnOnly.
 */
export async function checkDnsCommand(opts: CheckDnsOptions): Promise<number> {
  const output = parseOutput(opts.output);
  const wanted = parseRecordNames(opts.names, 'check-dns');
  const timeoutMs = parseDurationMs('--timeout', opts.timeout, MIN_TIMEOUT_MS, MAX_TIMEOUT_MS);
  const appsHost = opts.appsHost === undefined ? undefined : validateDnsName('--apps-host', opts.appsHost);
  const servers = await resolveServers(opts.servers);
  const log = loggerFor(opts.io);
  const state = await gatherOnce(everyLb(opts), opts.cluster, log, { upstreams: false, needs: lbsOf(wanted), check: (raw) => checkGatewayAsked(opts.names, wanted, raw) });
  const known = adminNames(state.spec, state.resolutions);

  const targets: CheckTarget[] = [];
  const skipped: { name: string; reason: string }[] = [];
  const skip = (name: string, reason: string): void => {
    skipped.push({ name, reason });
    log.warn('name not checked', { name, reason });
  };
  const lbResolver = new HostResolver({ servers: state.raw.dnsServers, timeoutMs, retries: TRIES - 1 });
  const addressesNow = async (hostname: string): Promise<string[]> => {
    const r = state.resolutions.get(hostname) ?? (await lbResolver.resolve(hostname));
    return [...r.v4, ...r.v6];
  };
  for (const check of wanted) {
    if (check === 'gateway') {
      for (const { name } of state.gateway.served) {
        const n = state.recordSet.names.find((r) => r.name === name);
        const expected = n ? [...n.v4, ...n.v6] : [];
        // A chain that ends at a load balancer's host name outside the zones: print-records leaves its addresses to the cloud's DNS, as for api.
        const last = n?.addressOwner;
        const ownName = last !== undefined && zoneOf(last, state.spec.gateway?.zones ?? []) === undefined ? last : undefined;
        if (expected.length > 0) targets.push({ name, query: name.startsWith('*.') ? randomUnder(name.slice(2)) : name, expected, ownName });
      }
      continue;
    }
    if (check === 'dnsrecords') {
      const lbNames = new Set(known.map((k) => k.name));
      // One check a name, against what print-records gives for it.
      for (const { record: r, givenBy } of adminDnsRecords(dnsRecordsBeside(state.spec.extraRecords, lbNames, state.spec, log), dnsRecordsBeside(state.unmanaged, lbNames, state.spec, log))) {
        if (givenBy !== undefined) continue;
        // A target that does not resolve gives no address: the name is listed as not checked, as one whose LB has none.
        const expected = [...new Set((await Promise.all(r.targets.map((t) => (t.kind === 'ip' ? [t.ip] : addressesNow(t.hostname).catch(() => []))))).flat())].sort();
        if (expected.length === 0) {
          skip(r.name, `not checked: ${r.source} has no usable target`);
          continue;
        }
        targets.push({ name: r.name, query: r.name.startsWith('*.') ? randomUnder(r.name.slice(2)) : r.name, expected, ownName: ownHostname(r.targets) });
      }
      continue;
    }
    const n = known.find((k) => k.lb === RECORD_NAME_LB[check]);
    if (n === undefined) continue;
    const expected = [...n.v4, ...n.v6];
    if (expected.length === 0) {
      skip(n.name, `not checked: ${noAddressReason(n)}`);
      continue;
    }
    targets.push({ name: n.name, query: check === 'apps' ? appsQuery(state.spec.domain, appsHost) : n.name, expected, ownName: ownHostname(n.endpoints) });
  }
  if (targets.length === 0) {
    const why = `nothing to check: ${skipped.length === 0 ? 'no name of --names has records' : skipped.map((s) => `${s.name} ${s.reason}`).join('; ')}`;
    if (!opts.warnOnly) throw new MissingDataError(why);
    log.warn(`${why} (--warn-only)`, {});
    return EXIT.ok;
  }

  const labels = new Map(servers.map((s) => [s.address, s.label]));
  const asked = await checkServers([...labels.keys()], targets, { timeoutMs, tries: TRIES, resolveTarget: addressesNow });
  const rows = asked.map((row) => ({ ...row, server: labels.get(row.server) ?? row.server }));
  const bad = rows.filter((r) => r.verdict !== 'ok');
  opts.io.stdout.write(output === 'json' ? `${JSON.stringify({ domain: state.spec.domain, ok: bad.length === 0, checks: rows, skipped }, null, 2)}\n` : formatCheckTable(rows));
  if (bad.length === 0) return EXIT.ok;
  const summary = mismatchSummary(bad, rows.length);
  if (!opts.warnOnly) throw new MismatchError(`${summary}, or pass --warn-only to report without failing`);
  log.warn('DNS check found mismatches (--warn-only)', { mismatches: bad.length, checks: rows.length, summary });
  return EXIT.ok;
}
