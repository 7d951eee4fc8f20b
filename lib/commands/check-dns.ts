import { randomBytes } from 'node:crypto';
import { getServers } from 'node:dns';
import { adminNames, noAddressReason } from '../admin-records.js';
import { checkServers, formatCheckTable, type CheckRow, type CheckTarget } from '../dns-check.js';
import { ConfigError, EXIT, MismatchError, MissingDataError, ValidationError } from '../errors.js';
import type { LbName } from '../model.js';
import { HostResolver, parseDnsServer } from '../resolve.js';
import { validateDnsName } from '../validate.js';
import type { ClusterFlags } from './cluster.js';
import { loggerFor, type CommandInputs } from './io.js';
import { gatherOnce } from './one-shot.js';

export const CHECK_NAMES = ['api', 'api-int', 'apps'] as const;
export type CheckName = (typeof CHECK_NAMES)[number];
const CHECK_LB: Readonly<Record<CheckName, LbName>> = { api: 'api', 'api-int': 'api-int', apps: 'ingress' };

export const CHECK_OUTPUTS = ['table', 'json'] as const;
export type CheckOutput = (typeof CHECK_OUTPUTS)[number];

export interface CheckDnsOptions extends CommandInputs {
  /** The admin's DNS servers, IP[:PORT] each; none: the system resolvers. */
  readonly servers?: readonly string[] | undefined;
  /** Comma-separated subset of api,api-int,apps; default all three. */
  readonly names?: string | undefined;
  /** Report mismatches but exit 0. */
  readonly warnOnly: boolean;
  readonly output: string;
  /** Per try: `2s`, `2` (seconds), `500ms` or `1m`. */
  readonly timeout: string;
  /** Name asked under apps instead of a random one: a label (`console-openshift-console`) or a full name. */
  readonly appsHost?: string | undefined;
  readonly cluster?: ClusterFlags | undefined;
}

const TRIES = 2;
const MIN_TIMEOUT_MS = 50;
const MAX_TIMEOUT_MS = 60_000;

export function parseCheckNames(value: string | undefined): CheckName[] {
  if (value === undefined) return [...CHECK_NAMES];
  const names = value.split(',').map((n) => n.trim()).filter((n) => n !== '');
  const hint = `use a comma-separated subset of ${CHECK_NAMES.join(',')}`;
  for (const n of names) if (!(CHECK_NAMES as readonly string[]).includes(n)) throw new ValidationError('--names', n, 'is not a name check-dns checks', hint);
  if (names.length === 0) throw new ValidationError('--names', value, 'is empty', hint);
  return CHECK_NAMES.filter((n) => names.includes(n));
}

export function parseTimeoutMs(value: string): number {
  const m = /^([0-9]+)(ms|s|m)?$/.exec(value);
  const unit = m?.[2] === 'ms' ? 1 : m?.[2] === 'm' ? 60_000 : 1000;
  const ms = m ? Number(m[1]) * unit : NaN;
  if (!(ms >= MIN_TIMEOUT_MS && ms <= MAX_TIMEOUT_MS)) {
    throw new ValidationError('--timeout', value, `is not a duration from ${MIN_TIMEOUT_MS}ms to ${MAX_TIMEOUT_MS / 1000}s`, 'write it as seconds ("2s", "2") or milliseconds ("500ms")');
  }
  return ms;
}

function parseOutput(value: string): CheckOutput {
  if (!(CHECK_OUTPUTS as readonly string[]).includes(value)) throw new ValidationError('--output', value, 'is not an output format', `use one of ${CHECK_OUTPUTS.join(', ')}`);
  return value as CheckOutput;
}

function parseServers(values: readonly string[] | undefined): string[] {
  if (values !== undefined && values.length > 0) {
    const parsed = values.map((v) => {
      try {
        return parseDnsServer(v);
      } catch {
        throw new ValidationError('--server', v, 'is not a DNS server address', 'use IP, IP:PORT or [IPv6]:PORT, e.g. 192.0.2.53 or [fd00::53]:53');
      }
    });
    return [...new Set(parsed)];
  }
  const system = getServers();
  if (system.length === 0) throw new ConfigError('the system has no DNS resolver configured (resolv.conf names no nameserver); pass --server with your DNS servers');
  return system;
}

/** A random label by default, so a `*.apps` that exists only as a few specific names is not mistaken for the wildcard. */
function appsQuery(domain: string, appsHost: string | undefined): string {
  const apps = `apps.${domain}`;
  if (appsHost === undefined) return `lbdns-check-${randomBytes(4).toString('hex')}.${apps}`;
  const name = validateDnsName('--apps-host', appsHost);
  return name.endsWith(`.${apps}`) ? name : `${name}.${apps}`;
}

function mismatchSummary(bad: readonly CheckRow[], total: number): string {
  const each = bad.map((r) => `${r.query} at ${r.server}: ${r.verdict}${r.detail ? ` (${r.detail})` : ''}`).join('; ');
  const advice = [
    bad.some((r) => r.verdict !== 'unreachable') ? 'put the records "lbdns print-records" prints into these DNS servers' : '',
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
  const wanted = parseCheckNames(opts.names);
  const timeoutMs = parseTimeoutMs(opts.timeout);
  const servers = parseServers(opts.servers);
  const log = loggerFor(opts.io);
  // The admin's DNS serves every client, so all three LBs count whatever role a shared config names.
  const state = await gatherOnce({ ...opts, flags: { ...opts.flags, role: 'control-plane' } }, opts.cluster, log, { upstreams: false });
  const known = adminNames(state.spec, state.resolutions);

  const targets: CheckTarget[] = [];
  const skipped: { name: string; reason: string }[] = [];
  for (const check of wanted) {
    const n = known.find((k) => k.lb === CHECK_LB[check]);
    if (n === undefined) continue;
    const expected = [...n.v4, ...n.v6];
    if (expected.length === 0) {
      const reason = `not checked: ${noAddressReason(n)}`;
      skipped.push({ name: n.name, reason });
      log.warn('name not checked', { name: n.name, reason });
      continue;
    }
    targets.push({ name: n.name, query: check === 'apps' ? appsQuery(state.spec.domain, opts.appsHost) : n.name, expected });
  }
  if (targets.length === 0) throw new MissingDataError(`nothing to check: ${skipped.map((s) => `${s.name} ${s.reason}`).join('; ')}`);

  const lbResolver = new HostResolver({ servers: state.raw.dnsServers, timeoutMs, retries: TRIES - 1 });
  const rows = await checkServers(servers, targets, {
    timeoutMs,
    tries: TRIES,
    resolveTarget: async (hostname) => {
      const r = state.resolutions.get(hostname) ?? (await lbResolver.resolve(hostname));
      return [...r.v4, ...r.v6];
    },
  });
  const bad = rows.filter((r) => r.verdict !== 'ok');
  opts.io.stdout.write(output === 'json' ? `${JSON.stringify({ domain: state.spec.domain, ok: bad.length === 0, checks: rows, skipped }, null, 2)}\n` : formatCheckTable(rows));
  if (bad.length === 0) return EXIT.ok;
  const summary = mismatchSummary(bad, rows.length);
  if (!opts.warnOnly) throw new MismatchError(`${summary}, or pass --warn-only to report without failing`);
  log.warn('DNS check found mismatches (--warn-only)', { mismatches: bad.length, checks: rows.length, summary });
  return EXIT.ok;
}
