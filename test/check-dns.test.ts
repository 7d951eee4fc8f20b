import { test } from 'uvu';
import { freePort } from './support/peers.js';
import { lookup } from 'node:dns/promises';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { API_INT_IP, dnsRecord, DOMAIN as CLUSTER_DOMAIN, INGRESS_IP, LB_CONFIG, startCluster, UPSTREAM } from './support/cluster-fixture.js';
import { startDnsServer, type DnsTestServer } from './support/dns-server.js';
import { logLines, runLbdns, type CliResult } from './support/run-cli.js';

/*
 * `admin` and `admin2` play the admin's own DNS servers; `lbDns` is the resolver lbdns asks
 * for LB host names (--dns-server). Each test uses its own cluster domain so no test sees
 * another's records. The test server has no wildcards, so tests name the apps host.
 */
let admin: DnsTestServer;
let admin2: DnsTestServer;
let lbDns: DnsTestServer;
let clusterNo = 0;

test.before(async () => {
  [admin, admin2, lbDns] = await Promise.all([startDnsServer(), startDnsServer(), startDnsServer()]);
});

test.after(async () => {
  await Promise.all([admin.close(), admin2.close(), lbDns.close()]);
});

interface Cluster {
  readonly domain: string;
  readonly api: string;
  readonly apiInt: string;
  readonly apps: string;
  readonly flags: string[];
}

interface LbFlags {
  readonly api?: readonly string[];
  readonly apiInt?: readonly string[];
  readonly ingress?: readonly string[];
  /** Name under apps to ask; null: check-dns's random default. */
  readonly appsHost?: string | null;
}

/** A fresh domain; LBs by default: api 10.0.0.10 + fd00::10, api-int 10.0.0.20, ingress 10.0.1.30 + 10.0.1.31. */
function newCluster(lbs: LbFlags = {}): Cluster {
  const domain = `c${++clusterNo}.example.com`;
  const many = (flag: string, values: readonly string[]) => values.flatMap((v) => [flag, v]);
  const appsHost = lbs.appsHost === undefined ? 'probe' : lbs.appsHost;
  return {
    domain,
    api: `api.${domain}`,
    apiInt: `api-int.${domain}`,
    apps: `probe.apps.${domain}`,
    flags: [
      ...['--domain', domain, '--upstream', '10.0.0.2', '--dns-server', lbDns.address],
      ...many('--api-lb', lbs.api ?? ['10.0.0.10', 'fd00::10']),
      ...many('--api-int-lb', lbs.apiInt ?? ['10.0.0.20']),
      ...many('--ingress-lb', lbs.ingress ?? ['10.0.1.30', '10.0.1.31']),
      ...(appsHost === null ? [] : ['--apps-host', appsHost]),
    ],
  };
}

/** What a correctly configured admin DNS serves for the cluster. */
function serveRight(server: DnsTestServer, c: Cluster): void {
  server.set(c.api, { A: ['10.0.0.10'], AAAA: ['fd00::10'] });
  server.set(c.apiInt, { A: ['10.0.0.20'] });
  server.set(c.apps, { A: ['10.0.1.30', '10.0.1.31'] });
}

function checkDns(c: Cluster, args: readonly string[] = [], servers: readonly DnsTestServer[] = [admin]): Promise<CliResult> {
  return runLbdns(['check-dns', ...c.flags, ...servers.flatMap((s) => ['--server', s.address]), '--timeout', '300ms', ...args]);
}

interface Row {
  server: string;
  name: string;
  query: string;
  expected: string[];
  answered: string[];
  cnames: string[];
  verdict: string;
  detail: string;
}

interface Report {
  domain: string;
  ok: boolean;
  checks: Row[];
  skipped: { name: string; reason: string }[];
}

async function report(c: Cluster, args: readonly string[] = [], servers: readonly DnsTestServer[] = [admin]): Promise<{ r: CliResult; json: Report }> {
  const r = await checkDns(c, [...args, '--output', 'json'], servers);
  return { r, json: JSON.parse(r.stdout) as Report };
}

function rowFor(json: Report, query: string, server: DnsTestServer = admin): Row {
  const row = json.checks.find((x) => x.query === query && x.server === server.address);
  assert.ok(row, `no row for ${query} at ${server.address}: ${JSON.stringify(json.checks)}`);
  return row;
}

/** Table rows as [server, name, verdict]. */
function tableRows(stdout: string): string[][] {
  const [header, ...rows] = stdout.trimEnd().split('\n');
  assert.match(header ?? '', /^SERVER\s+NAME\s+EXPECTED\s+ANSWERED\s+VERDICT\s+DETAIL$/);
  const verdictAt = (header ?? '').indexOf('VERDICT');
  return rows.map((line) => {
    const cells = line.split(/\s{2,}/);
    return [cells[0] ?? '', cells[1] ?? '', line.slice(verdictAt).split(/\s{2,}/)[0] ?? ''];
  });
}

test('right answers for every name: a table of ok rows and exit 0', async () => {
  const c = newCluster();
  serveRight(admin, c);
  const r = await checkDns(c);
  assert.is(r.code, 0, r.stderr);
  assert.equal(tableRows(r.stdout), [
    [admin.address, c.api, 'ok'],
    [admin.address, c.apiInt, 'ok'],
    [admin.address, c.apps, 'ok'],
  ]);
  assert.match(r.stdout, new RegExp(`${c.api.replaceAll('.', '\\.')}\\s+10\\.0\\.0\\.10,fd00::10\\s+10\\.0\\.0\\.10,fd00::10\\s+ok`));
  assert.is(r.stderr, '');
});

test('a workstation whose resolv.conf lists only a loopback resolver can check: check-dns forwards nothing', async () => {
  const c = newCluster();
  serveRight(admin, c);
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-check-resolv-'));
  try {
    await writeFile(join(dir, 'resolv.conf'), 'nameserver 127.0.0.53\n');
    const flags = c.flags.filter((f, i, all) => f !== '--upstream' && all[i - 1] !== '--upstream');
    const r = await runLbdns(['check-dns', ...flags, '--resolv-conf', join(dir, 'resolv.conf'), '--server', admin.address, '--timeout', '300ms']);
    assert.is(r.code, 0, r.stderr);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('answers none of which are the LB\'s: wrong IP and exit 3, naming the name and server', async () => {
  const c = newCluster();
  serveRight(admin, c);
  admin.set(c.api, { A: ['192.0.2.99'] });
  const r = await checkDns(c);
  assert.is(r.code, 3);
  assert.equal(tableRows(r.stdout)[0], [admin.address, c.api, 'wrong IP']);
  assert.match(r.stderr, new RegExp(`1 of 3 checks do not match the load balancers: ${c.api.replaceAll('.', '\\.')} at ${admin.address}: wrong IP`));
  assert.match(r.stderr, /lbdns print-records/);
});

test('a name the server does not have (NXDOMAIN) is missing', async () => {
  const c = newCluster();
  serveRight(admin, c);
  admin.remove(c.apiInt);
  const { r, json } = await report(c);
  assert.is(r.code, 3);
  const row = rowFor(json, c.apiInt);
  assert.is(row.verdict, 'missing');
  assert.is(row.detail, 'NXDOMAIN');
  assert.equal(row.answered, []);
});

test('a name with no A or AAAA record (NODATA) is missing', async () => {
  const c = newCluster();
  serveRight(admin, c);
  admin.set(c.apiInt, {});
  const { json } = await report(c);
  const row = rowFor(json, c.apiInt);
  assert.is(row.verdict, 'missing');
  assert.match(row.detail, /NODATA/);
});

test('answers lacking some of the LB\'s IPs are partial, naming what is lacking', async () => {
  const c = newCluster();
  serveRight(admin, c);
  admin.set(c.apps, { A: ['10.0.1.30'] });
  const { r, json } = await report(c);
  assert.is(r.code, 3);
  const row = rowFor(json, c.apps);
  assert.is(row.verdict, 'partial');
  assert.is(row.detail, 'lacks 10.0.1.31');
});

test('answers with an address beside the LB\'s are partial, naming the extra one', async () => {
  const c = newCluster();
  serveRight(admin, c);
  admin.set(c.api, { A: ['10.0.0.10', '10.0.0.99'], AAAA: ['fd00::10'] });
  const { json } = await report(c);
  const row = rowFor(json, c.api);
  assert.is(row.verdict, 'partial');
  assert.is(row.detail, 'extra 10.0.0.99');
});

test('an IPv4-mapped AAAA beside the right answers is an extra address, not dropped: partial', async () => {
  const c = newCluster();
  serveRight(admin, c);
  admin.set(c.api, { A: ['10.0.0.10'], AAAA: ['fd00::10', '::ffff:1.2.3.4'] });
  const { json } = await report(c);
  const row = rowFor(json, c.api);
  assert.is(row.verdict, 'partial');
  assert.match(row.detail, /^extra ::ffff:/);
});

test('a missing family counts: only the A of a dual-stack LB is partial', async () => {
  const c = newCluster();
  serveRight(admin, c);
  admin.set(c.api, { A: ['10.0.0.10'] });
  const { json } = await report(c);
  const row = rowFor(json, c.api);
  assert.is(row.verdict, 'partial');
  assert.is(row.detail, 'lacks fd00::10');
});

test('a CNAME chain to the LB host name, answered in full by the server, is ok and shows the chain', async () => {
  const lbHost = `router-${clusterNo + 1}.elb.example.net`;
  const c = newCluster({ ingress: [lbHost] });
  lbDns.set(lbHost, { A: ['198.51.100.30', '198.51.100.31'] });
  serveRight(admin, c);
  admin.set(c.apps, { CNAME: `apps-alias.${c.domain}` });
  admin.set(`apps-alias.${c.domain}`, { CNAME: lbHost });
  admin.set(lbHost, { A: ['198.51.100.30', '198.51.100.31'] });
  const { r, json } = await report(c);
  assert.is(r.code, 0, r.stderr);
  const row = rowFor(json, c.apps);
  assert.is(row.verdict, 'ok');
  assert.equal(row.expected, ['198.51.100.30', '198.51.100.31']);
  assert.equal(row.cnames, [`apps-alias.${c.domain}`, lbHost]);
  assert.is(row.detail, `via CNAME apps-alias.${c.domain} -> ${lbHost}`);
});

test('a CNAME to the LB host name that the server does not resolve itself is followed through the LB resolver: ok', async () => {
  const lbHost = `api-${clusterNo + 1}.elb.example.net`;
  const c = newCluster({ api: [lbHost] });
  lbDns.set(lbHost, { A: ['198.51.100.10'], AAAA: ['2001:db8::10'] });
  serveRight(admin, c);
  admin.set(c.api, { CNAME: lbHost });
  const { r, json } = await report(c);
  assert.is(r.code, 0, r.stderr);
  const row = rowFor(json, c.api);
  assert.is(row.verdict, 'ok');
  assert.equal(row.answered, ['198.51.100.10', '2001:db8::10']);
  assert.is(row.detail, `via CNAME ${lbHost}; answered the CNAME only; target resolved through --dns-server or the system resolver`);
});

test("a CNAME to the LB's own host name is ok though the cloud's DNS gives it other addresses there than lbdns's resolver got", async () => {
  const lbHost = `api-${clusterNo + 1}.elb.example.net`;
  const c = newCluster({ api: [lbHost] });
  lbDns.set(lbHost, { A: ['198.51.100.1', '198.51.100.2'] });
  serveRight(admin, c);
  admin.set(c.api, { CNAME: lbHost });
  admin.set(lbHost, { A: ['198.51.100.1', '198.51.100.3'] });
  const { r, json } = await report(c, ['--names', 'api']);
  assert.is(r.code, 0, r.stderr);
  const row = rowFor(json, c.api);
  assert.is(row.verdict, 'ok');
  assert.equal(row.answered, ['198.51.100.1', '198.51.100.3']);
  assert.is(row.detail, `via CNAME ${lbHost}; ${lbHost} is the load balancer's own name, whose addresses the cloud's DNS gives as it will`);
});

test('a CNAME to another host name than the LB\'s own, answering other addresses, is still partial', async () => {
  const lbHost = `api-${clusterNo + 1}.elb.example.net`;
  const c = newCluster({ api: [lbHost] });
  lbDns.set(lbHost, { A: ['198.51.100.1', '198.51.100.2'] });
  serveRight(admin, c);
  admin.set(c.api, { CNAME: `old-api.${c.domain}` });
  admin.set(`old-api.${c.domain}`, { A: ['198.51.100.1', '198.51.100.3'] });
  const { json } = await report(c, ['--names', 'api']);
  assert.is(rowFor(json, c.api).verdict, 'partial');
});

test("a CNAME the admin's server ends in NXDOMAIN (a recursive server that found no target) is missing, though the LB resolver resolves the target", async () => {
  const lbHost = `api-${clusterNo + 1}.elb.example.net`;
  const c = newCluster({ api: [lbHost] });
  lbDns.set(lbHost, { A: ['198.51.100.10'], AAAA: ['2001:db8::10'] });
  serveRight(admin, c);
  admin.set(c.api, { CNAME: lbHost });
  admin.fail(lbHost, 'nxdomain');
  try {
    const { json } = await report(c);
    const row = rowFor(json, c.api);
    assert.is(row.verdict, 'missing');
    assert.match(row.detail, new RegExp(`NXDOMAIN: ${lbHost.replaceAll('.', '\\.')} does not exist there`));
  } finally {
    admin.fail(lbHost, null);
  }
});

test('a CNAME to a name that resolves nowhere is missing, saying why', async () => {
  const c = newCluster();
  serveRight(admin, c);
  admin.set(c.api, { CNAME: 'gone.elb.example.net' });
  const { json } = await report(c);
  const row = rowFor(json, c.api);
  assert.is(row.verdict, 'missing');
  assert.match(row.detail, /^via CNAME gone\.elb\.example\.net; answered the CNAME only, and resolving the target .* failed: cannot resolve gone\.elb\.example\.net: NXDOMAIN/);
});

test('a CNAME to a name with other addresses is wrong IP', async () => {
  const c = newCluster();
  serveRight(admin, c);
  admin.set(c.api, { CNAME: `old-api.${c.domain}` });
  admin.set(`old-api.${c.domain}`, { A: ['192.0.2.1'] });
  const { json } = await report(c);
  const row = rowFor(json, c.api);
  assert.is(row.verdict, 'wrong IP');
  assert.match(row.detail, /^via CNAME old-api\./);
});

test('a server that never answers is unreachable, exit 3, within the configured timeout', async () => {
  const c = newCluster();
  serveRight(admin, c);
  admin.fail(c.apiInt, 'timeout');
  const started = Date.now();
  const { r, json } = await report(c);
  const elapsed = Date.now() - started;
  admin.fail(c.apiInt, null);
  assert.is(r.code, 3);
  const row = rowFor(json, c.apiInt);
  assert.is(row.verdict, 'unreachable');
  assert.is(row.detail, 'TIMEOUT');
  assert.ok(elapsed < 5000, `took ${elapsed} ms with --timeout 300ms`);
  assert.match(r.stderr, /check that the unreachable servers answer from here/);
});

test('a SERVFAIL or REFUSED answer is an error answer, not unreachable', async () => {
  const c = newCluster();
  serveRight(admin, c);
  admin.fail(c.apiInt, 'servfail');
  const { json } = await report(c);
  admin.fail(c.apiInt, null);
  assert.is(rowFor(json, c.apiInt).verdict, 'error answer');
  assert.is(rowFor(json, c.apiInt).detail, 'SERVFAIL (an error answer)');
});

test('one family refused: each family said on its own, the other one checked against its own addresses', async () => {
  const c = newCluster({ api: ['10.0.0.10', '10.0.0.11', 'fd00::10'] });
  serveRight(admin, c);
  admin.fail(c.api, 'refused', 'AAAA');
  const { json } = await report(c);
  admin.fail(c.api, null);
  const row = rowFor(json, c.api);
  assert.is(row.verdict, 'error answer');
  assert.is(row.detail, 'A: partial (lacks 10.0.0.11); AAAA: REFUSED (an error answer)');
  assert.equal(row.answered, ['10.0.0.10']);
});

test('a server that does not answer at all is unreachable', async () => {
  const c = newCluster();
  const silent = await freePort();
  const r = await runLbdns(['check-dns', ...c.flags, '--server', `127.0.0.1:${silent}`, '--timeout', '300ms', '--output', 'json']);
  assert.is(r.code, 3, r.stderr);
  const checks = (JSON.parse(r.stdout) as Report).checks;
  assert.ok(checks.length > 0 && checks.every((x) => x.verdict === 'unreachable'), r.stdout);
});

test('with nothing to check (no name of --names has records), --warn-only exits 0 with a warning, and without it exit 1', async () => {
  const c = newCluster();
  const failing = await checkDns(c, ['--names', 'dnsrecords']);
  assert.is(failing.code, 1);
  assert.match(failing.stderr, /nothing to check: no name of --names has records/);
  const warned = await checkDns(c, ['--names', 'dnsrecords', '--warn-only']);
  assert.is(warned.code, 0, warned.stderr);
  assert.ok(logLines(warned.stderr).some((l) => l.level === 'warn' && String(l.msg).startsWith('nothing to check')), warned.stderr);
});

test('--warn-only prints the same table but exits 0, with a warning on stderr', async () => {
  const c = newCluster();
  serveRight(admin, c);
  admin.set(c.api, { A: ['192.0.2.99'] });
  const failing = await checkDns(c);
  const warned = await checkDns(c, ['--warn-only']);
  assert.is(failing.code, 3);
  assert.is(warned.code, 0, warned.stderr);
  assert.is(warned.stdout, failing.stdout);
  const warnings = logLines(warned.stderr).filter((l) => l.level === 'warn');
  assert.is(warnings.length, 1);
  assert.match(String(warnings[0]?.summary), /wrong IP/);
});

test('--names api,apps checks only those: no row for api-int and no query for it', async () => {
  const c = newCluster();
  serveRight(admin, c);
  admin.remove(c.apiInt);
  const before = admin.queries(c.apiInt);
  const r = await checkDns(c, ['--names', 'api,apps']);
  assert.is(r.code, 0, r.stderr);
  assert.equal(tableRows(r.stdout).map((row) => row[1]), [c.api, c.apps]);
  assert.is(admin.queries(c.apiInt), before);
});

test('json output parses and carries every row with expected, answered and verdict', async () => {
  const c = newCluster();
  serveRight(admin, c);
  const { r, json } = await report(c);
  assert.is(r.code, 0, r.stderr);
  assert.is(json.domain, c.domain);
  assert.is(json.ok, true);
  assert.equal(json.skipped, []);
  assert.equal(json.checks[0], {
    server: admin.address,
    name: c.api,
    query: c.api,
    expected: ['10.0.0.10', 'fd00::10'],
    answered: ['10.0.0.10', 'fd00::10'],
    cnames: [],
    verdict: 'ok',
    detail: '',
  });
  assert.equal(json.checks[2]?.name, `*.apps.${c.domain}`);
  assert.equal(json.checks[2]?.query, c.apps);
});

test('two servers that disagree get a row each, and the mismatch fails the check', async () => {
  const c = newCluster();
  serveRight(admin, c);
  serveRight(admin2, c);
  admin2.set(c.api, { A: ['10.0.0.10'], AAAA: ['fd00::99'] });
  const r = await checkDns(c, [], [admin, admin2]);
  assert.is(r.code, 3);
  assert.equal(tableRows(r.stdout), [
    [admin.address, c.api, 'ok'],
    [admin.address, c.apiInt, 'ok'],
    [admin.address, c.apps, 'ok'],
    [admin2.address, c.api, 'partial'],
    [admin2.address, c.apiInt, 'ok'],
    [admin2.address, c.apps, 'ok'],
  ]);
  assert.match(r.stderr, new RegExp(`1 of 6 checks do not match the load balancers: ${c.api.replaceAll('.', '\\.')} at ${admin2.address.replaceAll('.', '\\.')}: partial \\(lacks fd00::10; extra fd00::99\\)`));
});

test('a server named twice is asked once', async () => {
  const c = newCluster();
  serveRight(admin, c);
  const r = await checkDns(c, ['--server', admin.address, '--names', 'api']);
  assert.is(r.code, 0, r.stderr);
  assert.equal(tableRows(r.stdout), [[admin.address, c.api, 'ok']]);
});

test('--server localhost:PORT asks every address localhost resolves to, each row named host (ip); 127.0.0.1, where the server listens, is ok', async () => {
  const c = newCluster();
  serveRight(admin, c);
  // localhost may also resolve to ::1, where nothing listens: that row is unreachable, and the check fails for it.
  const addresses = (await lookup('localhost', { all: true })).map((a) => (a.family === 6 ? `[${a.address}]:${admin.port}` : `${a.address}:${admin.port}`));
  const label = (address: string) => `localhost (${address})`;
  const { r, json } = await report(c, ['--server', `localhost:${admin.port}`], []);
  assert.equal([...new Set(json.checks.map((x) => x.server))], [...new Set(addresses)].map(label));
  const v4 = json.checks.filter((x) => x.server === label(admin.address));
  assert.equal(v4.map((x) => [x.query, x.verdict]), [[c.api, 'ok'], [c.apiInt, 'ok'], [c.apps, 'ok']]);
  // Where localhost is also ::1 and nothing listens there, that row fails the check.
  const v6 = json.checks.filter((x) => x.server !== label(admin.address));
  assert.ok(v6.every((x) => x.verdict === 'unreachable'), JSON.stringify(v6));
  assert.is(r.code, v6.length > 0 ? 3 : 0, r.stderr);
});

test('the table names a host-name server "host (ip:port)"', async () => {
  const c = newCluster();
  serveRight(admin, c);
  const r = await checkDns(c, ['--server', `localhost:${admin.port}`, '--names', 'api'], []);
  assert.ok(tableRows(r.stdout).some((row) => row[0] === `localhost (${admin.address})` && row[2] === 'ok'), r.stdout);
});

test('a server named by IP and by host name is asked once, under the name given first', async () => {
  const c = newCluster();
  serveRight(admin, c);
  const { json } = await report(c, ['--server', admin.address, '--server', `localhost:${admin.port}`, '--names', 'api'], []);
  assert.equal(json.checks.filter((x) => x.server.includes(admin.address)).map((x) => x.server), [admin.address]);
});

/** Runs `body` with the system resolver failing `host` as getaddrinfo does, so the test sends no query to the machine's own DNS server. */
async function withUnresolvable<T>(host: string, body: () => Promise<T>): Promise<T> {
  const dns = await import('node:dns');
  const real = dns.promises.lookup;
  dns.promises.lookup = (async (name: string, options: unknown) => {
    if (name === host) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND', hostname: name });
    return (real as (n: string, o: unknown) => Promise<unknown>)(name, options);
  }) as typeof real;
  try {
    return await body();
  } finally {
    dns.promises.lookup = real;
  }
}

test('a --server host name that does not resolve is refused with exit 2 before any query', async () => {
  const c = newCluster();
  const before = admin.queries();
  const r = await withUnresolvable('no-such-dns-server.invalid', () => runLbdns(['check-dns', ...c.flags, '--server', admin.address, '--server', 'no-such-dns-server.invalid']));
  assert.is(r.code, 2);
  assert.match(r.stderr, /--server: "no-such-dns-server\.invalid" is a host name the system resolver cannot resolve \(\w+\); give the DNS server as an IP, or as a name this machine resolves/);
  assert.is(r.stdout, '');
  assert.is(admin.queries(), before);
});

test('an ingress LB given as a host name is expected at the addresses it resolves to', async () => {
  const lbHost = `ingress-${clusterNo + 1}.elb.example.net`;
  const c = newCluster({ ingress: [lbHost] });
  lbDns.set(lbHost, { A: ['198.51.100.40'] });
  serveRight(admin, c);
  admin.set(c.apps, { A: ['198.51.100.40'] });
  const { r, json } = await report(c);
  assert.is(r.code, 0, r.stderr);
  assert.equal(rowFor(json, c.apps).expected, ['198.51.100.40']);
});

test('by default apps is checked with a fresh random name under apps, so only a wildcard passes', async () => {
  const c = newCluster({ appsHost: null });
  serveRight(admin, c);
  const one = await report(c);
  const two = await report(c);
  const queries = [one.json, two.json].map((j) => j.checks.find((x) => x.name === `*.apps.${c.domain}`)?.query ?? '');
  for (const q of queries) assert.match(q, new RegExp(`^lbdns-check-[0-9a-f]{8}\\.apps\\.${c.domain.replaceAll('.', '\\.')}$`));
  assert.is.not(queries[0], queries[1]);
  assert.ok(admin.queries(queries[0], 'A') >= 1);
  // This test server has no wildcard records: the specific probe name does not stand in for one.
  assert.is(one.json.checks.find((x) => x.query === queries[0])?.verdict, 'missing');
});

test('--apps-host takes a full name under apps as well as a label', async () => {
  const c = newCluster({ appsHost: null });
  serveRight(admin, c);
  const { r, json } = await report(c, ['--apps-host', c.apps]);
  assert.is(r.code, 0, r.stderr);
  assert.ok(json.checks.some((x) => x.query === c.apps));
});

test('a bad --apps-host exits 2 before any DNS server is asked, whatever --names checks', async () => {
  const c = newCluster({ appsHost: null });
  admin.resetCounts();
  const r = await runLbdns(['check-dns', '--domain', c.domain, '--api-lb', '10.0.0.10', '--api-int-lb', '10.0.0.20', '--ingress-lb', '10.0.1.30', '--server', admin.address, '--names', 'api', '--apps-host', 'bad..name']);
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, '--apps-host');
  assert.is(admin.queries(), 0);
});

test('with a kubeconfig, a private cluster (no external API LB): api is checked against the internal API LB, as api-int', async () => {
  const cluster = await startCluster();
  try {
    await cluster.server.mergePatch(LB_CONFIG, { data: { 'external-api-lb-ips': null } });
    admin.set(`api.${CLUSTER_DOMAIN}`, { A: [API_INT_IP] });
    admin.set(`api-int.${CLUSTER_DOMAIN}`, { A: [API_INT_IP] });
    admin.set(`probe.apps.${CLUSTER_DOMAIN}`, { A: [INGRESS_IP] });
    const r = await runLbdns(['check-dns', cluster.kubeconfig, '--upstream', UPSTREAM, '--wait-timeout', '10s', '--server', admin.address, '--apps-host', 'probe', '--output', 'json']);
    assert.is(r.code, 0, r.stderr);
    const json = JSON.parse(r.stdout) as Report;
    assert.equal(json.checks.map((x) => [x.query, x.verdict]), [[`api.${CLUSTER_DOMAIN}`, 'ok'], [`api-int.${CLUSTER_DOMAIN}`, 'ok'], [`probe.apps.${CLUSTER_DOMAIN}`, 'ok']]);
    assert.equal(json.skipped, []);
  } finally {
    await cluster.close();
  }
});

test("with a kubeconfig, an Unmanaged ingress controller's DNSRecord is checked at the admin's DNS: missing until created, then ok", async () => {
  const cluster = await startCluster();
  try {
    // A specific name: this test server has no wildcard records (a wildcard's check asks a random name under it).
    await cluster.server.create(dnsRecord('apps2', { dnsName: `router.apps2.${CLUSTER_DOMAIN}.`, targets: ['10.0.2.40'], dnsManagementPolicy: 'Unmanaged' }));
    const args = ['check-dns', cluster.kubeconfig, '--upstream', UPSTREAM, '--wait-timeout', '10s', '--server', admin.address, '--names', 'dnsrecords', '--output', 'json'];
    const before = await runLbdns(args);
    assert.is(before.code, 3, before.stderr);
    const missing = JSON.parse(before.stdout) as Report;
    assert.equal(missing.checks.map((x) => [x.query, x.verdict]), [[`router.apps2.${CLUSTER_DOMAIN}`, 'missing']]);
    admin.set(`router.apps2.${CLUSTER_DOMAIN}`, { A: ['10.0.2.40'] });
    const after = await runLbdns(args);
    assert.is(after.code, 0, after.stderr);
    assert.equal((JSON.parse(after.stdout) as Report).checks.map((x) => x.verdict), ['ok']);
  } finally {
    admin.remove(`router.apps2.${CLUSTER_DOMAIN}`);
    await cluster.close();
  }
});

test("an Unmanaged DNSRecord whose CNAME target resolves nowhere is listed as not checked, and the other names are checked", async () => {
  const cluster = await startCluster();
  try {
    await cluster.server.create(dnsRecord('apps2', { dnsName: `router.apps2.${CLUSTER_DOMAIN}.`, recordType: 'CNAME', targets: ['gone.elb.example.net'], dnsManagementPolicy: 'Unmanaged' }));
    await cluster.server.create(dnsRecord('apps3', { dnsName: `router.apps3.${CLUSTER_DOMAIN}.`, targets: ['10.0.3.40'], dnsManagementPolicy: 'Unmanaged' }));
    admin.set(`router.apps3.${CLUSTER_DOMAIN}`, { A: ['10.0.3.40'] });
    const r = await runLbdns(['check-dns', cluster.kubeconfig, '--upstream', UPSTREAM, '--dns-server', lbDns.address, '--wait-timeout', '10s', '--server', admin.address, '--names', 'dnsrecords', '--output', 'json']);
    assert.is(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as Report & { skipped: { name: string; reason: string }[] };
    assert.equal(report.checks.map((x) => [x.query, x.verdict]), [[`router.apps3.${CLUSTER_DOMAIN}`, 'ok']]);
    assert.equal(report.skipped.map((x) => x.name), [`router.apps2.${CLUSTER_DOMAIN}`]);
  } finally {
    admin.remove(`router.apps3.${CLUSTER_DOMAIN}`);
    await cluster.close();
  }
});

test('two ingress DNSRecords of one name are checked once, against the Managed one (what CoreDNS serves)', async () => {
  const cluster = await startCluster();
  try {
    await cluster.server.create(dnsRecord('apps2-unmanaged', { dnsName: `router.apps2.${CLUSTER_DOMAIN}.`, targets: ['10.0.2.41'], dnsManagementPolicy: 'Unmanaged' }));
    await cluster.server.create(dnsRecord('apps2', { dnsName: `router.apps2.${CLUSTER_DOMAIN}.`, targets: ['10.0.2.40'] }));
    admin.set(`router.apps2.${CLUSTER_DOMAIN}`, { A: ['10.0.2.40'] });
    const r = await runLbdns(['check-dns', cluster.kubeconfig, '--upstream', UPSTREAM, '--wait-timeout', '10s', '--server', admin.address, '--names', 'dnsrecords', '--output', 'json']);
    assert.is(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as Report).checks.map((x) => [x.query, x.verdict]), [[`router.apps2.${CLUSTER_DOMAIN}`, 'ok']]);
  } finally {
    admin.remove(`router.apps2.${CLUSTER_DOMAIN}`);
    await cluster.close();
  }
});

for (const [flag, value, message] of [
  ['--server', 'dns.example.com:99999', /--server: "dns\.example\.com:99999" is not a DNS server address; use IP, IP:PORT, \[IPv6\]:PORT, HOST or HOST:PORT/],
  ['--names', 'api,ingress', /--names: "ingress" is not a name check-dns knows; use a comma-separated subset of api,api-int,apps,dnsrecords/],
  ['--timeout', '2h', /--timeout: "2h" is not from 50ms to 60s/],
  ['--output', 'yaml', /--output: "yaml" is not an output format/],
] as const) {
  test(`a bad ${flag} is refused with exit 2 before any query`, async () => {
    const c = newCluster();
    const before = admin.queries();
    const r = await runLbdns(['check-dns', ...c.flags, '--server', admin.address, flag, value]);
    assert.is(r.code, 2);
    assert.match(r.stderr, message);
    assert.is(r.stdout, '');
    assert.is(admin.queries(), before);
  });
}

test.run();
