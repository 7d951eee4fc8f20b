import type { Resolver } from 'node:dns/promises';
import { dnsErrorCode, TRANSIENT_DNS_ERRORS } from '../resolve/host-resolver.js';
import { canonicalIp, sortUniqueIps } from '../grammar/ip.js';

/** What one server's answers for one name amount to, compared with the LB addresses. */
export type Verdict = 'ok' | 'missing' | 'wrong IP' | 'partial' | 'error answer' | 'unreachable';

export interface CheckTarget {
  /** The record the admin adds: `api.<domain>`, `*.apps.<domain>`. */
  readonly name: string;
  /** The name asked: the record's own, or one under the wildcard. */
  readonly query: string;
  /** The LB's addresses as the cluster sees them; canonical, sorted, never empty. */
  readonly expected: readonly string[];
  /**
   * The one host name all of `expected` comes from (a cloud LB's own name), if so: a CNAME to it
   * is what print-records --cname gives, right whatever subset of its addresses the cloud's DNS
   * answers there at the moment, which need not be the subset lbdns's resolver got.
   */
  readonly ownName?: string | undefined;
}

export interface CheckRow {
  readonly server: string;
  readonly name: string;
  readonly query: string;
  readonly expected: readonly string[];
  /** A and AAAA answers, canonical and sorted. */
  readonly answered: readonly string[];
  /** The CNAME chain the server gave for the query, first target first. */
  readonly cnames: readonly string[];
  readonly verdict: Verdict;
  /** What a person needs beside the verdict: the DNS error, the chain, what differs. */
  readonly detail: string;
}

export interface DnsCheckOptions {
  /** Per try, milliseconds. */
  readonly timeoutMs: number;
  /** Tries per query and server; more than 1 rides over a lost UDP packet. */
  readonly tries: number;
  /**
   * Addresses of a CNAME target the asked server gave no address for (an authoritative
   * server for the cluster's zone, not for the LB's): what the clients' recursive resolvers
   * would find. Throws when it cannot tell.
   */
  readonly resolveTarget: (hostname: string) => Promise<readonly string[]>;
}

type Outcome =
  | { readonly kind: 'answer'; readonly values: readonly string[] }
  | { readonly kind: 'nxdomain' }
  | { readonly kind: 'nodata' }
  | { readonly kind: 'failed'; readonly reason: string; readonly answered: boolean };

/** c-ares codes of an answer whose rcode is an error. */
const ERROR_ANSWERS = new Set(['ESERVFAIL', 'EREFUSED', 'ENOTIMP', 'EFORMERR', 'EBADRESP']);

// Long enough for any sane chain, short enough to end a loop quickly.
const MAX_CHAIN = 8;

async function ask(query: () => Promise<string[]>): Promise<Outcome> {
  try {
    const values = await query();
    // A CNAME-only answer comes back as an empty list rather than ENODATA.
    return values.length === 0 ? { kind: 'nodata' } : { kind: 'answer', values };
  } catch (err) {
    const code = dnsErrorCode(err);
    if (code === 'ENOTFOUND') return { kind: 'nxdomain' };
    if (code === 'ENODATA') return { kind: 'nodata' };
    const known = TRANSIENT_DNS_ERRORS.get(code);
    // The server answered, with an error rcode; anything else (a timeout, nothing listening, a local failure) is no answer.
    const answered = ERROR_ANSWERS.has(code);
    if (known !== undefined) return { kind: 'failed', reason: known.detail === undefined ? known.reason : `${known.reason} (${known.detail})`, answered };
    return { kind: 'failed', reason: code === 'UNKNOWN' ? String(err) : code, answered };
  }
}

function addresses(...outcomes: Outcome[]): string[] {
  // An answer lbdns would never serve (an IPv4-mapped AAAA) is still an answer: kept as given, so it shows as extra.
  return sortUniqueIps(outcomes.flatMap((o) => (o.kind === 'answer' ? o.values : [])).map((ip) => canonicalIp(ip) ?? ip.toLowerCase()));
}

async function addressesAt(resolver: Resolver, name: string): Promise<{ a: Outcome; aaaa: Outcome }> {
  const [a, aaaa] = await Promise.all([ask(() => resolver.resolve4(name)), ask(() => resolver.resolve6(name))]);
  return { a, aaaa };
}

/** Asking for CNAME does not make a server follow the chain, so each link is one question. */
async function cnameChain(resolver: Resolver, first: Outcome): Promise<string[]> {
  const chain: string[] = [];
  let next = first;
  while (next.kind === 'answer' && chain.length < MAX_CHAIN) {
    const target = (next.values[0] ?? '').toLowerCase().replace(/\.$/, '');
    if (target === '' || chain.includes(target)) break;
    chain.push(target);
    next = await ask(() => resolver.resolveCname(target));
  }
  return chain;
}

function verdictOf(expected: readonly string[], answered: readonly string[]): Verdict {
  if (answered.length === 0) return 'missing';
  const hits = answered.filter((ip) => expected.includes(ip)).length;
  if (hits === 0) return 'wrong IP';
  return hits === expected.length && answered.length === expected.length ? 'ok' : 'partial';
}

function differences(expected: readonly string[], answered: readonly string[]): string {
  const lacking = expected.filter((ip) => !answered.includes(ip));
  const extra = answered.filter((ip) => !expected.includes(ip));
  return [lacking.length > 0 ? `lacks ${lacking.join(',')}` : '', extra.length > 0 ? `extra ${extra.join(',')}` : ''].filter((s) => s !== '').join('; ');
}

async function checkOne(server: string, target: CheckTarget, opts: DnsCheckOptions): Promise<CheckRow> {
  const { Resolver } = await import('node:dns/promises');
  const resolver = new Resolver({ timeout: opts.timeoutMs, tries: opts.tries });
  resolver.setServers([server]);
  try {
    const [{ a, aaaa }, firstCname] = await Promise.all([addressesAt(resolver, target.query), ask(() => resolver.resolveCname(target.query))]);
    const row = (answered: readonly string[], cnames: readonly string[], verdict: Verdict, detail: string): CheckRow => ({
      server,
      name: target.name,
      query: target.query,
      expected: target.expected,
      answered,
      cnames,
      verdict,
      detail,
    });

    // One family without an answer leaves the set unknown: claiming ok or missing would be a
    // guess. Each family is said on its own: what the other answered, against what it should.
    if (a.kind === 'failed' || aaaa.kind === 'failed') {
      const both = a.kind === 'failed' && aaaa.kind === 'failed' && a.reason === aaaa.reason;
      const family = (name: 'A' | 'AAAA', o: Outcome, v6: boolean): string => {
        if (o.kind === 'failed') return `${name}: ${o.reason}${o.answered ? ' (an error answer)' : ''}`;
        const expected = target.expected.filter((ip) => ip.includes(':') === v6);
        const got = addresses(o);
        const verdict = verdictOf(expected, got);
        return `${name}: ${verdict === 'ok' || (expected.length === 0 && got.length === 0) ? 'ok' : `${verdict}${verdict === 'missing' ? '' : ` (${differences(expected, got)})`}`}`;
      };
      const detail = both ? (a.kind === 'failed' ? `${a.reason}${a.answered ? ' (an error answer)' : ''}` : '') : [family('A', a, false), family('AAAA', aaaa, true)].join('; ');
      const noAnswer = (a.kind === 'failed' && !a.answered) || (aaaa.kind === 'failed' && !aaaa.answered);
      return row(addresses(a, aaaa), [], noAnswer ? 'unreachable' : 'error answer', detail);
    }

    const cnames = await cnameChain(resolver, firstCname);
    const via = cnames.length > 0 ? `via CNAME ${cnames.join(' -> ')}` : '';
    const final = cnames.at(-1);
    let answered = addresses(a, aaaa);
    let source = '';
    // NXDOMAIN with the chain (a recursive server that found no target): clients get NXDOMAIN. The
    // target asked alone may be NXDOMAIN at a server authoritative for the cluster's zone only, whose
    // clients' resolvers follow the chain elsewhere: that one is looked up through lbdns's resolver.
    const nxdomain = a.kind === 'nxdomain' || aaaa.kind === 'nxdomain';
    if (answered.length === 0 && final !== undefined && !nxdomain) {
      const there = await addressesAt(resolver, final);
      answered = addresses(there.a, there.aaaa);
      if (answered.length === 0) {
        source = 'answered the CNAME only; target resolved through --dns-server or the system resolver';
        try {
          answered = sortUniqueIps(await opts.resolveTarget(final));
        } catch (err) {
          return row([], cnames, 'missing', [via, `answered the CNAME only, and resolving the target through --dns-server or the system resolver failed: ${(err as Error).message}`].join('; '));
        }
      }
    }

    const verdict = verdictOf(target.expected, answered);
    if (verdict !== 'ok' && target.ownName !== undefined && cnames.includes(target.ownName) && answered.length > 0) {
      return row(answered, cnames, 'ok', [via, source, `${target.ownName} is the load balancer's own name, whose addresses the cloud's DNS gives as it will`].filter((s) => s !== '').join('; '));
    }
    const why =
      verdict === 'missing'
        ? final !== undefined
          ? nxdomain
            ? `NXDOMAIN: ${final} does not exist there`
            : `${final} has no A or AAAA record`
          : a.kind === 'nxdomain' && aaaa.kind === 'nxdomain'
            ? 'NXDOMAIN'
            : 'no A or AAAA record (NODATA)'
        : verdict === 'ok'
          ? ''
          : differences(target.expected, answered);
    return row(answered, cnames, verdict, [via, source, why].filter((s) => s !== '').join('; '));
  } finally {
    resolver.cancel();
  }
}

/** Every server asked for every target, all at once; one row per server and target, servers in the order given. */
export async function checkServers(servers: readonly string[], targets: readonly CheckTarget[], opts: DnsCheckOptions): Promise<CheckRow[]> {
  return Promise.all(servers.flatMap((server) => targets.map((target) => checkOne(server, target, opts))));
}

const list = (ips: readonly string[]): string => (ips.length === 0 ? '-' : ips.join(','));

/** A plain-text table, one row per server and name, columns padded to the widest cell. */
export function formatCheckTable(rows: readonly CheckRow[]): string {
  const header = ['SERVER', 'NAME', 'EXPECTED', 'ANSWERED', 'VERDICT', 'DETAIL'];
  const cells = [header, ...rows.map((r) => [r.server, r.query, list(r.expected), list(r.answered), r.verdict, r.detail])];
  const widths = header.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return `${cells.map((row) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd()).join('\n')}\n`;
}
