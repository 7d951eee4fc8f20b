import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_INT_IP, API_IP, dnsRecord, DOMAIN as CLUSTER_DOMAIN, INGRESS_IP, LB_CONFIG, startCluster, UPSTREAM } from './support/cluster-fixture.js';
import { startDnsServer, type DnsTestServer } from './support/dns-server.js';
import { logLines, runLbdns, type CliResult } from './support/run-cli.js';

const DOMAIN = 'c1.example.com';
const BASE = ['--domain', DOMAIN, '--upstream', '10.0.0.2'];
const IP_LBS = ['--api-lb', '10.0.0.10', '--api-lb', '10.0.0.11', '--api-lb', 'fd00::10', '--api-int-lb', '10.0.0.20', '--ingress-lb', '10.0.1.30', '--ingress-lb', 'fd00::30'];
const API_HOST = 'api-1234.elb.us-east-1.amazonaws.com';
const INGRESS_HOST = 'router-5678.elb.us-east-1.amazonaws.com';

let root: string;
let lbDns: DnsTestServer;

test.before(async () => {
  root = await mkdtemp(join(tmpdir(), 'lbdns-print-records-'));
  lbDns = await startDnsServer();
  lbDns.set(API_HOST, { A: ['198.51.100.1', '198.51.100.2'], AAAA: ['2001:db8::1'] });
  lbDns.set(INGRESS_HOST, { A: ['198.51.100.30'] });
});

test.after(async () => {
  await lbDns.close();
  await rm(root, { recursive: true, force: true });
});

const HOSTNAME_LBS = () => ['--dns-server', lbDns.address, '--api-lb', API_HOST, '--api-int-lb', '10.0.0.20', '--ingress-lb', INGRESS_HOST];

async function printRecords(args: readonly string[]): Promise<string> {
  const r = await runLbdns(['print-records', ...BASE, ...args]);
  assert.is(r.code, 0, r.stderr);
  return r.stdout;
}

test('--names gateway without a Gateway zone is a usage error, exit 2, before anything is asked', async () => {
  const r = await runLbdns(['print-records', ...BASE, '--names', 'gateway']);
  assert.is(r.code, 2);
  assert.match(r.stderr, /^lbdns: error: --names gateway needs --gateway-zone/);
  assert.is(r.stdout, '');
});

test('a workstation whose resolv.conf lists only a loopback resolver can print: print-records forwards nothing', async () => {
  await writeFile(join(root, 'loopback-resolv.conf'), 'nameserver 127.0.0.53\n');
  const r = await runLbdns(['print-records', '--domain', DOMAIN, '--resolv-conf', join(root, 'loopback-resolv.conf'), ...IP_LBS]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, `api.${DOMAIN}.`);
});

interface ToolResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const TOOL_PACKAGES: Record<string, string> = { 'named-checkzone': 'bind9-utils', nsupdate: 'bind9-dnsutils' };

/** Runs a Debian tool; a missing one fails the test, never skips it. */
function runTool(cmd: string, args: readonly string[]): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', (err: NodeJS.ErrnoException) => {
      reject(err.code === 'ENOENT' ? new Error(`${cmd} is not installed: run "make test-deps" (as root; installs ${TOOL_PACKAGES[cmd] ?? 'it'}), which "make test" does`) : err);
    });
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

let fileNo = 0;
async function tempFile(text: string): Promise<string> {
  const path = join(root, `file-${++fileNo}`);
  await writeFile(path, text);
  return path;
}

/** The printed lines pasted into an admin's zone file for `origin`, after its own $TTL, SOA and NS; `after` follows them. */
function parentZone(origin: string, records: string, after = ''): string {
  return [`$ORIGIN ${origin}.`, '$TTL 3600', '@ IN SOA ns1 hostmaster 1 3600 600 86400 60', '@ IN NS ns1', 'ns1 IN A 192.0.2.53', records, after].join('\n');
}

async function checkZone(origin: string, records: string): Promise<ToolResult> {
  return runTool('named-checkzone', [origin, await tempFile(parentZone(origin, records))]);
}

/** Record lines only, whitespace collapsed: "NAME TTL IN TYPE RDATA"; comments and $ directives left out. */
function recordLines(zone: string): string[] {
  return zone
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith(';') && !l.startsWith('$'))
    .map((l) => l.trim().split(/\s+/).join(' '));
}

function comments(text: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(';'));
}

/** nsupdate parses the script and prints the update message it would send: `send` becomes `show`, so nothing leaves the machine. */
async function nsupdateParse(script: string): Promise<ToolResult & { update: string[] }> {
  const lines = script.trimEnd().split('\n');
  assert.is(lines.at(-1), 'send');
  const r = await runTool('nsupdate', [await tempFile(`${lines.slice(0, -1).join('\n')}\nshow\n`)]);
  const section = r.stdout.split(';; UPDATE SECTION:\n')[1] ?? '';
  const update = section
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => l.trim().split(/\s+/).join(' '));
  return { ...r, update };
}

test('zone output starts the cluster domain\'s own zone file: named-checkzone loads it, its $TTL serving the SOA and NS', async () => {
  const out = await printRecords(HOSTNAME_LBS());
  // An SOA and NS without TTLs, as an admin would add them below the printed lines.
  const zone = `${out}$ORIGIN ${DOMAIN}.\n@ IN SOA ns1 hostmaster 1 3600 600 86400 60\n@ IN NS ns1\nns1 IN A 192.0.2.53\n`;
  const r = await runTool('named-checkzone', [DOMAIN, await tempFile(zone)]);
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /loaded serial 1\nOK/);
  assert.not.match(r.stdout + r.stderr, /TTL/, 'no warning about a missing default TTL');
});

test('zone output loads in named-checkzone inside a parent zone too: names are absolute', async () => {
  const out = await printRecords(IP_LBS);
  const r = await checkZone('example.com', out);
  assert.is(r.code, 0, r.stdout + r.stderr);
});

test('named-checkzone rejects the output with a broken line added, so the check can fail', async () => {
  const out = await printRecords(IP_LBS);
  const r = await checkZone(DOMAIN, `${out}api.${DOMAIN}. 60 IN A 10.0.0.300\n`);
  assert.is.not(r.code, 0);
  assert.match(r.stdout + r.stderr, /bad dotted quad/);
});

test('zone output starts with a $TTL line of --ttl', async () => {
  const out = await printRecords([...IP_LBS, '--ttl', '300']);
  assert.is(out.split('\n')[0], '$TTL 300');
});

test('zone output needs no $ORIGIN, and every record carries its own TTL besides the $TTL', async () => {
  const out = await printRecords(IP_LBS);
  assert.equal(out.split('\n').filter((l) => l.startsWith('$')), ['$TTL 60']);
  for (const line of recordLines(out)) assert.match(line, /^\S+\.c1\.example\.com\. 60 IN (A|AAAA) \S+$/);
});

test('pasted into a parent zone, the $TTL becomes the default TTL of the parent\'s later records, as the header warns', async () => {
  const out = await printRecords([...IP_LBS, '--ttl', '300']);
  const r = await runTool('named-checkzone', ['-D', 'example.com', await tempFile(parentZone('example.com', out, 'later IN A 192.0.2.9'))]);
  assert.is(r.code, 0, r.stdout + r.stderr);
  const later = r.stdout.split('\n').find((l) => l.startsWith('later.example.com.'));
  assert.is(later?.trim().split(/\s+/)[1], '300', r.stdout);
  assert.match(comments(out).join('\n'), /Pasting into a parent zone file\? Leave the \$TTL line out: there it would become the\n; default TTL of every later record in that file that has no TTL of its own/);
});

test('zone output has api, api-int and *.apps, one A per IPv4 and one AAAA per IPv6', async () => {
  const out = await printRecords(IP_LBS);
  assert.equal(recordLines(out), [
    'api.c1.example.com. 60 IN A 10.0.0.10',
    'api.c1.example.com. 60 IN A 10.0.0.11',
    'api.c1.example.com. 60 IN AAAA fd00::10',
    'api-int.c1.example.com. 60 IN A 10.0.0.20',
    '*.apps.c1.example.com. 60 IN A 10.0.1.30',
    '*.apps.c1.example.com. 60 IN AAAA fd00::30',
  ]);
});

test('node names are not printed: the cluster serves them to itself', async () => {
  const out = await printRecords([...IP_LBS, '--node', 'master-0=10.0.0.5']);
  assert.not.match(out, /master-0/);
});

test('--ttl sets the TTL of every record', async () => {
  const out = await printRecords([...IP_LBS, '--ttl', '300']);
  const lines = recordLines(out);
  assert.ok(lines.length > 0);
  for (const line of lines) assert.is(line.split(' ')[1], '300');
});

test('a role from a config file does not shrink the records: all three names are printed', async () => {
  const config = await tempFile('role: bootstrap\n');
  const out = await printRecords([...IP_LBS, '--config', config]);
  assert.equal([...new Set(recordLines(out).map((l) => l.split(' ')[0]))], ['api.c1.example.com.', 'api-int.c1.example.com.', '*.apps.c1.example.com.']);
});

test('16 IPs per name give 16 records per name, and the zone still loads', async () => {
  const ips = Array.from({ length: 16 }, (_, i) => `10.0.2.${i + 1}`);
  const v6 = Array.from({ length: 16 }, (_, i) => `fd00::${(i + 1).toString(16)}`);
  const args = [...ips.flatMap((ip) => ['--api-lb', ip]), ...v6.flatMap((ip) => ['--api-int-lb', ip]), ...ips.flatMap((ip) => ['--ingress-lb', ip])];
  const out = await printRecords(args);
  const lines = recordLines(out);
  assert.is(lines.filter((l) => l.startsWith('api.c1.example.com. 60 IN A ')).length, 16);
  assert.is(lines.filter((l) => l.startsWith('api-int.c1.example.com. 60 IN AAAA ')).length, 16);
  assert.is(lines.filter((l) => l.startsWith('*.apps.c1.example.com. 60 IN A ')).length, 16);
  const r = await checkZone(DOMAIN, out);
  assert.is(r.code, 0, r.stdout + r.stderr);
});

test('a host name LB without --cname gets its current addresses, with a comment to run again or use --cname', async () => {
  const out = await printRecords(HOSTNAME_LBS());
  assert.equal(recordLines(out).filter((l) => l.startsWith('api.')), [
    'api.c1.example.com. 60 IN A 198.51.100.1',
    'api.c1.example.com. 60 IN A 198.51.100.2',
    'api.c1.example.com. 60 IN AAAA 2001:db8::1',
  ]);
  assert.ok(comments(out).some((c) => c.startsWith('; api: ') && /current addresses, which the cloud may change.*--cname/.test(c)), out);
});

test('--cname points a host name LB at its host name, says why, and the zone still loads', async () => {
  const out = await printRecords([...HOSTNAME_LBS(), '--cname']);
  const lines = recordLines(out);
  assert.equal(lines.filter((l) => l.startsWith('api.')), [`api.c1.example.com. 60 IN CNAME ${API_HOST}.`]);
  assert.equal(lines.filter((l) => l.startsWith('*.apps.')), [`*.apps.c1.example.com. 60 IN CNAME ${INGRESS_HOST}.`]);
  assert.ok(comments(out).some((c) => c.startsWith('; api: ') && /CNAME to the load balancer's host name rather than its current addresses/.test(c)), out);
  const r = await checkZone(DOMAIN, out);
  assert.is(r.code, 0, r.stdout + r.stderr);
});

test('--cname keeps A records for an LB that is only IPs, and says it has no host name', async () => {
  const out = await printRecords([...HOSTNAME_LBS(), '--cname']);
  assert.equal(recordLines(out).filter((l) => l.startsWith('api-int.')), ['api-int.c1.example.com. 60 IN A 10.0.0.20']);
  assert.ok(comments(out).some((c) => c.startsWith('; api-int: ') && /no host name to point a CNAME at/.test(c)), out);
});

test('--cname with an LB that has IPs beside a host name gives A/AAAA for all, no CNAME, and explains why', async () => {
  const out = await printRecords(['--dns-server', lbDns.address, '--api-lb', API_HOST, '--api-lb', '10.0.0.10', '--api-int-lb', '10.0.0.20', '--ingress-lb', '10.0.1.30', '--cname']);
  const api = recordLines(out).filter((l) => l.startsWith('api.'));
  assert.equal(api, [
    'api.c1.example.com. 60 IN A 10.0.0.10',
    'api.c1.example.com. 60 IN A 198.51.100.1',
    'api.c1.example.com. 60 IN A 198.51.100.2',
    'api.c1.example.com. 60 IN AAAA 2001:db8::1',
  ]);
  assert.ok(comments(out).some((c) => c.startsWith('; api: ') && /not a CNAME: the load balancer has 2 endpoints .*must be the only record at its name/.test(c)), out);
  const r = await checkZone(DOMAIN, out);
  assert.is(r.code, 0, r.stdout + r.stderr);
});

test('--cname with an LB of two host names gives A/AAAA for both, no CNAME', async () => {
  const out = await printRecords(['--dns-server', lbDns.address, '--api-lb', '10.0.0.10', '--api-int-lb', '10.0.0.20', '--ingress-lb', INGRESS_HOST, '--ingress-lb', API_HOST, '--cname']);
  const apps = recordLines(out).filter((l) => l.startsWith('*.apps.'));
  assert.equal(apps.map((l) => l.split(' ')[3]), ['A', 'A', 'A', 'AAAA']);
});

test('nsupdate output is a script nsupdate parses into one update replacing each name\'s A, AAAA and CNAME', async () => {
  const script = await printRecords([...IP_LBS, '--format', 'nsupdate']);
  const r = await nsupdateParse(script);
  assert.is(r.code, 0, r.stdout + r.stderr);
  const del = (name: string) => ['A', 'AAAA', 'CNAME'].map((t) => `${name} 0 ANY ${t}`);
  assert.equal(r.update, [
    ...del('api.c1.example.com.'),
    'api.c1.example.com. 60 IN A 10.0.0.10',
    'api.c1.example.com. 60 IN A 10.0.0.11',
    'api.c1.example.com. 60 IN AAAA fd00::10',
    ...del('api-int.c1.example.com.'),
    'api-int.c1.example.com. 60 IN A 10.0.0.20',
    ...del('*.apps.c1.example.com.'),
    '*.apps.c1.example.com. 60 IN A 10.0.1.30',
    '*.apps.c1.example.com. 60 IN AAAA fd00::30',
  ]);
});

test('nsupdate rejects the script with a broken line added, so the check can fail', async () => {
  const script = await printRecords([...IP_LBS, '--format', 'nsupdate']);
  const r = await nsupdateParse(script.replace('\nsend\n', `\nupdate add api.${DOMAIN}. 60 A 10.0.0.300\nsend\n`));
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /bad dotted quad/);
});

test('nsupdate output has no blank line (nsupdate would send there), ends with send, and has no server line by default', async () => {
  const script = await printRecords([...IP_LBS, '--format', 'nsupdate']);
  const lines = script.trimEnd().split('\n');
  assert.not.ok(lines.includes(''));
  assert.is(lines.at(-1), 'send');
  assert.not.ok(lines.some((l) => l.startsWith('server ')));
  assert.is(script.split('\nsend').length, 2);
});

test('--nsupdate-server adds a server line nsupdate accepts, v4 and v6', async () => {
  const v4 = await printRecords([...IP_LBS, '--format', 'nsupdate', '--nsupdate-server', '192.0.2.53']);
  assert.ok(v4.split('\n').includes('server 192.0.2.53 53'));
  const v6 = await printRecords([...IP_LBS, '--format', 'nsupdate', '--nsupdate-server', '[fd00::53]:5353']);
  assert.ok(v6.split('\n').includes('server fd00::53 5353'));
  for (const script of [v4, v6]) {
    const r = await nsupdateParse(script);
    assert.is(r.code, 0, r.stdout + r.stderr);
  }
});

test('nsupdate output with --cname deletes the old A and AAAA and adds the CNAME in the same update', async () => {
  const script = await printRecords([...HOSTNAME_LBS(), '--format', 'nsupdate', '--cname']);
  assert.ok(comments(script).some((c) => c.startsWith('; api: ') && /CNAME to the load balancer's host name/.test(c)), script);
  const r = await nsupdateParse(script);
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.equal(
    r.update.filter((l) => l.startsWith('api.')),
    ['api.c1.example.com. 0 ANY A', 'api.c1.example.com. 0 ANY AAAA', 'api.c1.example.com. 0 ANY CNAME', `api.c1.example.com. 60 IN CNAME ${API_HOST}.`],
  );
});

const GATEWAY_EXAMPLE = ['print-records', '--example', '--gateway-zone', 'gw.example.com'];

/** The printed text split at each "; Add the records below to the zone that holds ZONE" line: zone → its lines. */
function zoneSections(text: string): Map<string, string> {
  const sections = new Map<string, string>();
  let zone: string | undefined;
  for (const line of text.split('\n')) {
    const head = /^; Add the records below to the zone that holds (\S+) /.exec(line);
    if (head) zone = head[1] as string;
    else if (zone !== undefined) sections.set(zone, `${sections.get(zone) ?? ''}${line}\n`);
  }
  return sections;
}

test('zone output with a Gateway zone gives each zone a section of its own, which named-checkzone loads into that zone with nothing out of zone', async () => {
  const r = await runLbdns(GATEWAY_EXAMPLE);
  assert.is(r.code, 0, r.stderr);
  const sections = zoneSections(r.stdout);
  assert.equal([...sections.keys()], ['mycluster.example.com', 'gw.example.com']);
  for (const [zone, lines] of sections) {
    const checked = await checkZone(zone, lines);
    assert.is(checked.code, 0, checked.stdout + checked.stderr);
    assert.not.match(checked.stdout + checked.stderr, /out-of-zone/, `${zone}: ${checked.stdout}`);
    assert.ok(recordLines(lines).length > 0, zone);
  }
});

test('nsupdate output with a Gateway zone sends one update message per zone, each naming only that zone\'s names (RFC 2136 refuses others)', async () => {
  const r = await runLbdns([...GATEWAY_EXAMPLE, '--format', 'nsupdate']);
  assert.is(r.code, 0, r.stderr);
  const messages = r.stdout.split('\nsend\n').slice(0, -1);
  assert.is(messages.length, 2, r.stdout);
  for (const [i, zone] of ['mycluster.example.com', 'gw.example.com'].entries()) {
    const parsed = await nsupdateParse(`${messages[i] as string}\nsend\n`);
    assert.is(parsed.code, 0, parsed.stdout + parsed.stderr);
    assert.ok(parsed.update.length > 0);
    assert.ok(parsed.update.every((l) => (l.split(' ')[0] as string).endsWith(`.${zone}.`)), `${zone}: ${parsed.update.join('\n')}`);
  }
});

test('json output is one {name, type, ttl, value, lb} per record', async () => {
  const out = await printRecords([...IP_LBS, '--format', 'json']);
  const records = JSON.parse(out) as unknown[];
  assert.equal(records, [
    { name: 'api.c1.example.com', type: 'A', ttl: 60, value: '10.0.0.10', lb: 'api' },
    { name: 'api.c1.example.com', type: 'A', ttl: 60, value: '10.0.0.11', lb: 'api' },
    { name: 'api.c1.example.com', type: 'AAAA', ttl: 60, value: 'fd00::10', lb: 'api' },
    { name: 'api-int.c1.example.com', type: 'A', ttl: 60, value: '10.0.0.20', lb: 'api-int' },
    { name: '*.apps.c1.example.com', type: 'A', ttl: 60, value: '10.0.1.30', lb: 'ingress' },
    { name: '*.apps.c1.example.com', type: 'AAAA', ttl: 60, value: 'fd00::30', lb: 'ingress' },
  ]);
});

test('json output with --cname gives the CNAME with a note saying why', async () => {
  const out = await printRecords([...HOSTNAME_LBS(), '--format', 'json', '--cname']);
  const records = JSON.parse(out) as { name: string; type: string; value: string; note?: string }[];
  const api = records.filter((r) => r.name === 'api.c1.example.com');
  assert.is(api.length, 1);
  assert.is(api[0]?.type, 'CNAME');
  assert.is(api[0]?.value, API_HOST);
  assert.match(api[0]?.note ?? '', /current addresses, which the cloud may change/);
});

async function failing(args: readonly string[]): Promise<CliResult> {
  const r = await runLbdns(['print-records', ...BASE, ...IP_LBS, ...args]);
  assert.is.not(r.code, 0);
  return r;
}

test('an unknown --format is refused with exit 2, naming the formats', async () => {
  const r = await failing(['--format', 'bind']);
  assert.is(r.code, 2);
  assert.match(r.stderr, /--format: "bind" is not a record format; use one of zone, nsupdate, json/);
  assert.is(r.stdout, '');
});

test('--nsupdate-server with another format is refused with exit 2', async () => {
  const r = await failing(['--nsupdate-server', '192.0.2.53']);
  assert.is(r.code, 2);
  assert.match(r.stderr, /--nsupdate-server: "192\.0\.2\.53" has no effect with --format zone/);
});

test('an LB host name that does not resolve fails the command rather than printing a partial set', async () => {
  const r = await runLbdns(['print-records', ...BASE, '--dns-server', lbDns.address, '--api-lb', 'gone.elb.example.net', '--api-int-lb', '10.0.0.20', '--ingress-lb', '10.0.1.30']);
  assert.is(r.code, 1);
  assert.is(r.stdout, '');
  assert.match(r.stderr, /cannot resolve gone\.elb\.example\.net: NXDOMAIN/);
  assert.equal(logLines(r.stderr), []);
});

test('with a kubeconfig, the records come from the cluster', async () => {
  const cluster = await startCluster();
  try {
    const r = await runLbdns(['print-records', cluster.kubeconfig, '--upstream', UPSTREAM, '--wait-timeout', '10s']);
    assert.is(r.code, 0, r.stderr);
    assert.equal(recordLines(r.stdout), [
      `api.${CLUSTER_DOMAIN}. 60 IN A ${API_IP}`,
      `api-int.${CLUSTER_DOMAIN}. 60 IN A ${API_INT_IP}`,
      `*.apps.${CLUSTER_DOMAIN}. 60 IN A ${INGRESS_IP}`,
    ]);
  } finally {
    await cluster.close();
  }
});

test('--names api needs only the API LB: from flags, none of the others is asked for', async () => {
  const r = await runLbdns(['print-records', ...BASE, '--api-lb', '10.0.0.10', '--names', 'api']);
  assert.is(r.code, 0, r.stderr);
  assert.equal(recordLines(r.stdout), [`api.${DOMAIN}. 60 IN A 10.0.0.10`]);
});

test('--names api,api-int with a kubeconfig does not wait for a router LB that does not exist yet', async () => {
  const cluster = await startCluster({ ingress: [] });
  try {
    const started = Date.now();
    const r = await runLbdns(['print-records', cluster.kubeconfig, '--upstream', UPSTREAM, '--wait-timeout', '20s', '--names', 'api,api-int']);
    assert.is(r.code, 0, r.stderr);
    assert.ok(Date.now() - started < 15_000, `answered before --wait-timeout (${Date.now() - started} ms)`);
    assert.equal(recordLines(r.stdout), [`api.${CLUSTER_DOMAIN}. 60 IN A ${API_IP}`, `api-int.${CLUSTER_DOMAIN}. 60 IN A ${API_INT_IP}`]);
  } finally {
    await cluster.close();
  }
});

test('a private cluster (no external API LB): api is printed with the internal API LB, and a comment says why', async () => {
  const cluster = await startCluster();
  try {
    await cluster.server.mergePatch(LB_CONFIG, { data: { 'external-api-lb-ips': null } });
    const r = await runLbdns(['print-records', cluster.kubeconfig, '--upstream', UPSTREAM, '--wait-timeout', '10s']);
    assert.is(r.code, 0, r.stderr);
    const lines = recordLines(r.stdout);
    assert.equal(lines.map((l) => l.split(' ')[0]), [`api.${CLUSTER_DOMAIN}.`, `api-int.${CLUSTER_DOMAIN}.`, `*.apps.${CLUSTER_DOMAIN}.`]);
    assert.is(lines[0]?.split(' ').at(-1), lines[1]?.split(' ').at(-1), 'api answers what api-int answers');
    assert.ok(comments(r.stdout).some((c) => c.startsWith('; api: external API load balancer - served by the internal API load balancer: a private cluster has no external one')), r.stdout);
    assert.not.ok(logLines(r.stderr).some((l) => l.level === 'warn'), r.stderr);
  } finally {
    await cluster.close();
  }
});

test("an Unmanaged ingress controller's DNSRecord is printed for the admin at its recordTTL, and named-checkzone loads it", async () => {
  const cluster = await startCluster();
  try {
    await cluster.server.create(dnsRecord('apps2', { dnsName: `*.apps2.${CLUSTER_DOMAIN}.`, recordType: 'CNAME', targets: ['router2.elb.example.net'], recordTTL: 45, dnsManagementPolicy: 'Unmanaged' }));
    await cluster.server.create(dnsRecord('apps3', { dnsName: `*.apps3.${CLUSTER_DOMAIN}.`, targets: ['10.0.3.40'], recordTTL: 120 }));
    const r = await runLbdns(['print-records', cluster.kubeconfig, '--upstream', UPSTREAM, '--wait-timeout', '10s', '--names', 'dnsrecords']);
    assert.is(r.code, 0, r.stderr);
    assert.equal(recordLines(r.stdout), [`*.apps2.${CLUSTER_DOMAIN}. 45 IN CNAME router2.elb.example.net.`, `*.apps3.${CLUSTER_DOMAIN}. 120 IN A 10.0.3.40`]);
    assert.ok(comments(r.stdout).some((c) => c.startsWith(`; *.apps2.${CLUSTER_DOMAIN}: ingress controller DNSRecord openshift-ingress-operator/apps2 - dnsManagementPolicy Unmanaged`)), r.stdout);
    const zone = await checkZone(CLUSTER_DOMAIN, r.stdout.split('\n').filter((l) => !l.startsWith('$')).join('\n'));
    assert.is(zone.code, 0, `${zone.stdout}${zone.stderr}`);
  } finally {
    await cluster.close();
  }
});

test("--names dnsrecords leaves out a DNSRecord for *.apps, which goes with the router LB alone", async () => {
  const cluster = await startCluster();
  try {
    await cluster.server.create(dnsRecord('default-wildcard', { dnsName: `*.apps.${CLUSTER_DOMAIN}.`, targets: ['10.0.9.9'] }));
    await cluster.server.create(dnsRecord('apps3', { dnsName: `*.apps3.${CLUSTER_DOMAIN}.`, targets: ['10.0.3.40'] }));
    const r = await runLbdns(['print-records', cluster.kubeconfig, '--upstream', UPSTREAM, '--wait-timeout', '10s', '--names', 'dnsrecords']);
    assert.is(r.code, 0, r.stderr);
    assert.equal(recordLines(r.stdout), [`*.apps3.${CLUSTER_DOMAIN}. 30 IN A 10.0.3.40`]);
  } finally {
    await cluster.close();
  }
});

test("a DNSRecord naming a node is not given to the admin, whose zone holds the node's own record, and the log says so", async () => {
  const cluster = await startCluster();
  try {
    await cluster.server.create(dnsRecord('over-node', { dnsName: `master-0.${CLUSTER_DOMAIN}.`, targets: ['203.0.113.2'], dnsManagementPolicy: 'Unmanaged' }));
    await cluster.server.create(dnsRecord('apps3', { dnsName: `*.apps3.${CLUSTER_DOMAIN}.`, targets: ['10.0.3.40'] }));
    const r = await runLbdns(['print-records', cluster.kubeconfig, '--upstream', UPSTREAM, '--wait-timeout', '10s', '--names', 'dnsrecords', '--format', 'nsupdate']);
    assert.is(r.code, 0, r.stderr);
    assert.not.match(r.stdout, 'master-0');
    assert.match(r.stdout, `update add *.apps3.${CLUSTER_DOMAIN}.`);
    assert.match(r.stderr, /"msg":"DNSRecord not given to the admin's DNS: it names a node, whose own record there it would replace","name":"master-0\.c1\.example\.com"/);
  } finally {
    await cluster.close();
  }
});

test('two ingress DNSRecords of one name give one set of records, the Managed one (what CoreDNS serves), and named-checkzone loads the zone', async () => {
  const cluster = await startCluster();
  try {
    await cluster.server.create(dnsRecord('apps2-unmanaged', { dnsName: `*.apps2.${CLUSTER_DOMAIN}.`, recordType: 'CNAME', targets: ['router2.elb.example.net'], dnsManagementPolicy: 'Unmanaged' }));
    await cluster.server.create(dnsRecord('apps2', { dnsName: `*.apps2.${CLUSTER_DOMAIN}.`, targets: ['10.0.2.40'] }));
    const r = await runLbdns(['print-records', cluster.kubeconfig, '--upstream', UPSTREAM, '--wait-timeout', '10s', '--names', 'dnsrecords']);
    assert.is(r.code, 0, r.stderr);
    assert.equal(recordLines(r.stdout).map((l) => l.split(' ').slice(0, 5).join(' ').replace(/ \d+ IN/, ' IN')), [`*.apps2.${CLUSTER_DOMAIN}. IN A 10.0.2.40`]);
    assert.match(r.stdout, /not included: \*\.apps2\.[a-z0-9.-]+ is given with dnsrecord\/openshift-ingress-operator\/apps2/);
    const zone = await checkZone(CLUSTER_DOMAIN, r.stdout.split('\n').filter((l) => !l.startsWith('$')).join('\n'));
    assert.is(zone.code, 0, `${zone.stdout}${zone.stderr}`);
  } finally {
    await cluster.close();
  }
});

test("the default ingress DNSRecord's *.apps is printed once, as the ingress LB's records, and named-checkzone loads the zone", async () => {
  const cluster = await startCluster();
  try {
    await cluster.server.create(dnsRecord('default-wildcard', { dnsName: `*.apps.${CLUSTER_DOMAIN}.`, recordType: 'CNAME', targets: ['router.elb.example.net'] }));
    const r = await runLbdns(['print-records', cluster.kubeconfig, '--upstream', UPSTREAM, '--wait-timeout', '10s']);
    assert.is(r.code, 0, r.stderr);
    const apps = recordLines(r.stdout).filter((l) => l.startsWith(`*.apps.${CLUSTER_DOMAIN}. `));
    assert.ok(apps.length > 0 && apps.every((l) => / IN A /.test(l)), r.stdout);
    const zone = await checkZone(CLUSTER_DOMAIN, r.stdout.split('\n').filter((l) => !l.startsWith('$')).join('\n'));
    assert.is(zone.code, 0, `${zone.stdout}${zone.stderr}`);
  } finally {
    await cluster.close();
  }
});

test('--names picks what is printed; by default the DNSRecords come after api, api-int and *.apps', async () => {
  const cluster = await startCluster();
  try {
    await cluster.server.create(dnsRecord('apps2', { dnsName: `*.apps2.${CLUSTER_DOMAIN}.`, targets: ['10.0.2.40'], dnsManagementPolicy: 'Unmanaged' }));
    const all = await runLbdns(['print-records', cluster.kubeconfig, '--upstream', UPSTREAM, '--wait-timeout', '10s', '--format', 'json']);
    assert.is(all.code, 0, all.stderr);
    assert.equal((JSON.parse(all.stdout) as { name: string }[]).map((x) => x.name), [`api.${CLUSTER_DOMAIN}`, `api-int.${CLUSTER_DOMAIN}`, `*.apps.${CLUSTER_DOMAIN}`, `*.apps2.${CLUSTER_DOMAIN}`]);
    const some = await runLbdns(['print-records', cluster.kubeconfig, '--upstream', UPSTREAM, '--wait-timeout', '10s', '--format', 'json', '--names', 'api-int,dnsrecords']);
    assert.equal((JSON.parse(some.stdout) as { name: string; source?: string }[]).map((x) => [x.name, x.source]), [[`api-int.${CLUSTER_DOMAIN}`, undefined], [`*.apps2.${CLUSTER_DOMAIN}`, 'dnsrecord/openshift-ingress-operator/apps2']]);
  } finally {
    await cluster.close();
  }
});

test('a bad --names is refused with exit 2', async () => {
  const r = await runLbdns(['print-records', ...BASE, ...IP_LBS, '--names', 'api,nodes']);
  assert.is(r.code, 2);
  assert.match(r.stderr, /--names: "nodes" is not a name print-records knows; use a comma-separated subset of api,api-int,apps,dnsrecords/);
});

test.run();
