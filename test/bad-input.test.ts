/**
 * Every bad input is refused before anything is written: exit code 2, a message on stderr
 * that names the field and the bad value, nothing on stdout, and the --out file exactly as it
 * was (same bytes, same mtime), or, when there was none, still none and no temp file.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runLbdns } from './support/run-cli.js';

const ROOT_TEMPLATES = fileURLToPath(new URL('../templates', import.meta.url));

const VALID: Readonly<Record<string, readonly string[]>> = {
  '--domain': ['c1.example.com'],
  '--api-lb': ['10.0.0.10'],
  '--api-int-lb': ['10.0.0.20'],
  '--ingress-lb': ['10.0.1.30'],
  '--upstream': ['10.0.0.2'],
};

/** A valid cluster's flags with some replaced (null: left out), then `extra`. */
function cluster(over: Record<string, readonly string[] | null> = {}, extra: readonly string[] = []): string[] {
  const flags = { ...VALID, ...over };
  return [...Object.entries(flags).flatMap(([flag, values]) => (values ?? []).flatMap((v) => [flag, v])), ...extra];
}

const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The message names the field and quotes the value as given. */
const names = (field: string, value: string): RegExp => new RegExp(`${esc(field)}: ${esc(JSON.stringify(value))}`);

const seq = (n: number, f: (i: number) => string): string[] => Array.from({ length: n }, (_, i) => f(i + 1));

const BUILTIN_LIKE_HEAD = '. {\n    errors\n';

/** Fixture files the cases read, written once into the inputs directory. */
const FILES: Record<string, string> = {
  'unknown-key.yaml': 'domain: c1.example.com\nloadBalancers:\n  api: [10.0.0.10]\n  apiInternal: [10.0.0.20]\n',
  'inherited-key.yaml': 'domain: c1.example.com\nconstructor: {}\n',
  'bad.yaml': 'domain: c1.example.com\nloadBalancers: {api: [10.0.0.10\n',
  'ttl-list.yaml': 'ttl: [60]\n',
  'tagged.yaml': 'domain: !!binary YzEuZXhhbXBsZS5jb20=\n',
  'lb-string.json': '{"loadBalancers": {"ingress": "10.0.1.30"}}\n',
  'no-upstreams.yaml': 'upstreams: []\n',
  'resolv-loopback.conf': 'nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch .\n',
  'close-brace.eta': `${BUILTIN_LIKE_HEAD}    forward . <%= it.upstreams.join(' ') %>\n<% if (it.names.length > 0) { %>    }\n<% } %>}\n`,
  'aaaa-in-a.eta': `${BUILTIN_LIKE_HEAD}<% for (const n of it.names) { -%>\n    template IN A <%= n.zone %> {\n        match <%= n.match %>\n        answer "{{ .Name }} <%= it.ttl %> IN AAAA fd00::1"\n    }\n<% } -%>\n    forward . <%= it.upstreams.join(' ') %>\n}\n`,
  'bad-ip-answer.eta': `${BUILTIN_LIKE_HEAD}<% for (const n of it.names) { -%>\n    template IN A <%= n.zone %> {\n        match <%= n.match %>\n<% for (const ip of n.v4) { -%>\n        answer "{{ .Name }} <%= it.ttl %> IN A <%= ip %>0"\n<% } -%>\n    }\n<% } -%>\n    forward . <%= it.upstreams.join(' ') %>\n}\n`,
  'eta-syntax.eta': '. {\n<% for (const n of it.names { %>\n}\n',
  'alias-bomb.yaml': `${['a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]', ...seq(8, (i) => `a${i}: &a${i} [${Array(9).fill(`*a${i - 1}`).join(', ')}]`)].join('\n')}\ndomain: *a8\n`,
  'too-big.yaml': `domain: c1.example.com\n${'# padding\n'.repeat(110_000)}`,
  'nan-ttl.yaml': 'ttl: .nan\n',
  'empty-out.yaml': "out: ''\n",
  'endless.eta': '. {\n<% while (true) {} %>\n}\n',
  'exits.eta': '. {\n<% process.exit(0) %>\n}\n',
  'endless-callback.eta': '. {\n<% Promise.resolve().then(() => { while (true) {} }) %>\n}\n',
  'timer.eta': '. {\n    errors\n<% setTimeout(() => { throw new Error("late") }, 10) %>\n}\n',
  'not-text.eta': '<% return { length: Infinity, charCodeAt() { return 32 } } -%>\n',
  'huge.eta': '# <%= "x".repeat(2 ** 26) %>\n. {\n    errors\n}\n',
  'not-a-kubeconfig': 'x'.repeat(2000),
  'no-clusters.kubeconfig': 'apiVersion: v1\nkind: Config\nclusters: []\n',
  'silent-plugin.kubeconfig': [
    'apiVersion: v1',
    'kind: Config',
    'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]',
    'users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/true, interactiveMode: Never}}}]',
    'contexts: [{name: x, context: {cluster: c, user: u}}]',
    'current-context: x',
    '',
  ].join('\n'),
  'runtime-error.eta': '. {\n    errors\n<%= it.nothing.here %>\n}\n',
  'throws-null.eta': '. {\n<% throw null %>\n}\n',
  'throws-string.eta': '. {\n<% throw "no upstream for this site" %>\n}\n',
  'throws-bare-object.eta': '. {\n<% throw Object.create(null) %>\n}\n',
  'throws-long.eta': '. {\n<% throw new Error("x".repeat(3000)) %>\n}\n',
  'missing-cert.kubeconfig': [
    'apiVersion: v1',
    'kind: Config',
    'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]',
    'users: [{name: u, user: {client-certificate: /nonexistent/lbdns/cert.pem, client-key: /nonexistent/lbdns/key.pem}}]',
    'contexts: [{name: x, context: {cluster: c, user: u}}]',
    'current-context: x',
    '',
  ].join('\n'),
  'relative-ca.kubeconfig': [
    'apiVersion: v1',
    'kind: Config',
    'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", certificate-authority: no-such-ca.crt}}]',
    'users: [{name: u, user: {token: t}}]',
    'contexts: [{name: x, context: {cluster: c, user: u}}]',
    'current-context: x',
    '',
  ].join('\n'),
};

interface BadInput {
  /** What is wrong, for the test's name. */
  readonly what: string;
  /** render-corefile's arguments, without --out; `inputs` is the directory FILES are in. */
  readonly args: (inputs: string) => string[];
  readonly message: RegExp;
  /** The case is about --out itself, so it is not given. */
  readonly withoutOut?: true;
}

const CASES: readonly BadInput[] = [
  { what: 'an IPv4 address with a leading zero', args: () => cluster({ '--api-lb': ['010.0.0.10'] }), message: names('--api-lb', '010.0.0.10') },
  { what: 'an IPv4 octet over 255', args: () => cluster({ '--api-lb': ['10.0.0.256'] }), message: names('--api-lb', '10.0.0.256') },
  { what: 'an IPv4-mapped IPv6 address', args: () => cluster({ '--ingress-lb': ['::ffff:10.0.1.30'] }), message: names('--ingress-lb', '::ffff:10.0.1.30') },
  { what: 'an IPv6 address with a zone id', args: () => cluster({ '--api-int-lb': ['fe80::1%eth0'] }), message: names('--api-int-lb', 'fe80::1%eth0') },
  { what: 'an IPv4 CIDR', args: () => cluster({ '--api-lb': ['10.0.0.0/24'] }), message: /--api-lb: "10\.0\.0\.0\/24" is neither an IP address nor a host name/ },
  { what: 'an IPv6 CIDR', args: () => cluster({ '--api-lb': ['fd00::/64'] }), message: /--api-lb: "fd00::\/64" is neither an IP address nor a host name/ },
  { what: 'an IPv4 address with a port', args: () => cluster({ '--api-lb': ['10.0.0.10:6443'] }), message: names('--api-lb', '10.0.0.10:6443') },
  { what: 'an IPv6 address with a port', args: () => cluster({ '--api-lb': ['[fd00::10]:6443'] }), message: names('--api-lb', '[fd00::10]:6443') },
  { what: 'an empty LB value', args: () => cluster({ '--api-lb': [''] }), message: /--api-lb: "" is empty/ },
  { what: 'a hostname with an underscore', args: () => cluster({ '--api-lb': ['api_lb.example.net'] }), message: names('--api-lb', 'api_lb.example.net') },
  { what: 'a hostname with a space', args: () => cluster({ '--api-lb': ['api lb.example.net'] }), message: names('--api-lb', 'api lb.example.net') },
  { what: 'a hostname with a brace', args: () => cluster({ '--ingress-lb': ['lb}.example.net'] }), message: names('--ingress-lb', 'lb}.example.net') },
  { what: 'a hostname with a quote', args: () => cluster({ '--ingress-lb': ['lb".example.net'] }), message: names('--ingress-lb', 'lb".example.net') },
  { what: 'a hostname with a newline', args: () => cluster({ '--ingress-lb': ['lb\n}\n. {'] }), message: names('--ingress-lb', 'lb\n}\n. {') },
  { what: 'a Go template action as hostname', args: () => cluster({ '--api-lb': ['{{ .Name }}'] }), message: names('--api-lb', '{{ .Name }}') },
  { what: 'a hostname with a comment sign', args: () => cluster({ '--api-lb': ['lb#x.example.net'] }), message: names('--api-lb', 'lb#x.example.net') },
  { what: 'a label longer than 63 characters', args: () => cluster({ '--api-lb': [`${'a'.repeat(64)}.example.net`] }), message: new RegExp(`--api-lb: "a{64}\\.example\\.net" has an invalid label`) },
  { what: 'a name longer than 253 characters', args: () => cluster({ '--api-lb': [`${seq(4, () => 'b'.repeat(63)).join('.')}.net`] }), message: /--api-lb: "(b{63}\.){3}b{8}…" \(259 characters\) is longer than 253 characters/ },
  { what: 'a dotted quad that is no address (all-numeric TLD)', args: () => cluster({ '--api-lb': ['10.0.0.300'] }), message: names('--api-lb', '10.0.0.300') },
  { what: 'a hostname with an all-numeric TLD', args: () => cluster({ '--api-lb': ['lb.example.123'] }), message: /--api-lb: "lb\.example\.123" ends in an all-numeric label/ },
  { what: '17 IPs for one LB', args: () => cluster({ '--api-lb': seq(17, (i) => `10.0.0.${i}`) }), message: /--api-lb: 17 entries exceed the limit of 16/ },
  { what: 'the same IP twice', args: () => cluster({ '--api-lb': ['10.0.0.10', '10.0.0.11', '10.0.0.10'] }), message: /--api-lb: "10\.0\.0\.10" is listed twice/ },
  { what: 'the same IPv6 address twice in different spellings', args: () => cluster({ '--api-lb': ['fd00::10', 'FD00:0:0::10'] }), message: /--api-lb: "fd00::10" is listed twice/ },
  { what: 'the same hostname twice', args: () => cluster({ '--ingress-lb': ['lb.example.net', 'LB.example.net.'] }), message: /--ingress-lb: "lb\.example\.net" is listed twice/ },
  { what: 'an unknown role', args: () => cluster({}, ['--role', 'master']), message: names('--role', 'master') },
  { what: 'an --api-lb flag on a bootstrap node, which serves no api', args: () => cluster({}, ['--role', 'bootstrap']), message: /--api-lb: is not served by role bootstrap; drop it, or choose the role that serves it: bootstrap serves api-int, \*\.apps$/m },
  { what: '--api-int-lb and --node flags on an apps-only node', args: () => cluster({ '--api-lb': null }, ['--role', 'apps-only', '--node', 'master-0=10.0.0.5']), message: /--api-int-lb, --node: is not served by role apps-only/ },
  { what: 'a config key every object inherits (constructor)', args: (d) => cluster({}, ['--config', join(d, 'inherited-key.yaml')]), message: /inherited-key\.yaml: constructor: \{\} is not a known setting/ },
  { what: 'a --geo-code naming one geo twice, in another case', args: () => cluster({}, ['--gateway-zone', 'gw.example.com', '--geo-code', 'IE,GEO-EU,geo-eu']), message: /--geo-code: "IE,GEO-EU,geo-eu" names geo-eu twice \(geo codes match without regard to case\)/ },
  { what: 'a --geo-code holding the default-geo marker', args: () => cluster({}, ['--gateway-zone', 'gw.example.com', '--geo-code', 'IE,*']), message: /--geo-code: "IE,\*" holds the default-geo marker \*, not a geo/ },
  { what: 'a --geo-code with an empty entry', args: () => cluster({}, ['--gateway-zone', 'gw.example.com', '--geo-code', 'IE,']), message: /--geo-code: "" is not a geo code/ },
  { what: 'a reverse-lookup zone as a Gateway zone', args: () => cluster({}, ['--gateway-zone', '10.in-addr.arpa']), message: /--gateway-zone: "10\.in-addr\.arpa" is a reverse-lookup zone/ },
  { what: 'an unknown config key', args: (d) => cluster({}, ['--config', join(d, 'unknown-key.yaml')]), message: /unknown-key\.yaml: loadBalancers\.apiInternal: \["10\.0\.0\.20"\] is not a known setting/ },
  { what: 'a config file that is not YAML', args: (d) => cluster({}, ['--config', join(d, 'bad.yaml')]), message: /bad\.yaml: not valid YAML or JSON/ },
  { what: 'a config file with a YAML tag outside the core schema', args: (d) => cluster({}, ['--config', join(d, 'tagged.yaml')]), message: /tagged\.yaml: not valid YAML or JSON: unknown tag/ },
  { what: 'a config field of the wrong type (YAML)', args: (d) => cluster({}, ['--config', join(d, 'ttl-list.yaml')]), message: /ttl-list\.yaml: ttl: \[60\] is not a number or a string/ },
  { what: 'a config field of the wrong type (JSON)', args: (d) => cluster({ '--ingress-lb': null }, ['--config', join(d, 'lb-string.json')]), message: /lb-string\.json: loadBalancers\.ingress: "10\.0\.1\.30" is not a list of strings/ },
  { what: 'a missing --domain', args: () => cluster({ '--domain': null }), message: /--domain: is required/ },
  { what: 'a domain with one label', args: () => cluster({ '--domain': ['cluster'] }), message: /--domain: "cluster" needs at least 2 labels/ },
  { what: 'a missing --ingress-lb on a control plane', args: () => cluster({ '--ingress-lb': null }), message: /--ingress-lb: is required for role control-plane/ },
  { what: 'a missing --api-int-lb on a bootstrap node', args: () => cluster({ '--api-int-lb': null, '--api-lb': null }, ['--role', 'bootstrap']), message: /--api-int-lb: is required for role bootstrap/ },
  { what: 'TTL 0', args: () => cluster({}, ['--ttl', '0']), message: names('--ttl', '0') },
  { what: 'TTL 90000', args: () => cluster({}, ['--ttl', '90000']), message: names('--ttl', '90000') },
  { what: "a TTL over the hosts plugin's 65535", args: () => cluster({}, ['--node', 'master-0=10.0.0.5', '--ttl', '65536']), message: /--ttl: "65536" is not a whole number from 1 to 65535/ },
  { what: 'a TTL that is no number', args: () => cluster({}, ['--ttl', 'abc']), message: names('--ttl', 'abc') },
  { what: 'a reload interval of 1s', args: () => cluster({}, ['--reload-interval', '1s']), message: /--reload-interval: "1s" is not from 2s/ },
  { what: 'a reload jitter of 0', args: () => cluster({}, ['--reload-jitter', '0']), message: /--reload-jitter: "0" is not from 1s/ },
  { what: 'a reload jitter over half the interval', args: () => cluster({}, ['--reload-interval', '4s', '--reload-jitter', '3s']), message: /--reload-jitter: "3s" is more than half the interval/ },
  { what: 'a reload interval that is no duration', args: () => cluster({}, ['--reload-interval', '2h']), message: names('--reload-interval', '2h') },
  { what: '--node without =', args: () => cluster({}, ['--node', 'master-0']), message: names('--node', 'master-0') },
  { what: '--node without a name', args: () => cluster({}, ['--node', '=10.0.0.5']), message: names('--node', '=10.0.0.5') },
  { what: 'a node with a bad IP', args: () => cluster({}, ['--node', 'master-0=10.0.0.05']), message: names('--node master-0', '10.0.0.05') },
  { what: 'a node name with a brace', args: () => cluster({}, ['--node', 'master-0}=10.0.0.5']), message: names('--node', 'master-0}') },
  { what: 'more than 15 upstreams', args: () => cluster({ '--upstream': seq(16, (i) => `10.9.0.${i}`) }), message: /--upstream: 16 entries exceed CoreDNS forward's limit of 15/ },
  { what: 'an upstream that is a hostname', args: () => cluster({ '--upstream': ['dns.example.net'] }), message: names('--upstream', 'dns.example.net') },
  { what: 'an upstream host name with a port', args: () => cluster({ '--upstream': ['dns.example.net:5353'] }), message: names('--upstream', 'dns.example.net:5353') },
  { what: 'an upstream port of 0', args: () => cluster({ '--upstream': ['10.0.0.2:0'] }), message: names('--upstream', '10.0.0.2:0') },
  { what: 'a health port that is the ready port', args: () => cluster({}, ['--health-port', '9000', '--ready-port', '9000']), message: /--ready-port: "9000" is the health port too/ },
  { what: 'a health port that is the default DNS port', args: () => cluster({}, ['--health-port', '53']), message: /--health-port: "53" is the DNS port \(--listen :53, the default\)/ },
  { what: 'a ready port that is the default DNS port', args: () => cluster({}, ['--ready-port', '53']), message: /--ready-port: "53" is the DNS port \(--listen :53, the default\)/ },
  { what: 'a health port that is the default ready port, named by the flag given', args: () => cluster({}, ['--health-port', '18181']), message: /--health-port: "18181" is the ready port too/ },
  { what: 'a health port out of range', args: () => cluster({}, ['--health-port', '65536']), message: names('--health-port', '65536') },
  { what: 'a listen port with a leading zero', args: () => cluster({}, ['--listen', '127.0.0.1:05353']), message: names('--listen', '127.0.0.1:05353') },
  { what: 'an upstream port with a leading zero', args: () => cluster({ '--upstream': ['10.0.0.2:053'] }), message: names('--upstream', '10.0.0.2:053') },
  { what: 'a listen port that is the health port', args: () => cluster({}, ['--health-port', '5353', '--listen', ':5353']), message: /--listen: ":5353" uses port 5353, which CoreDNS's health endpoint listens on/ },
  { what: 'an empty upstream list in the config file', args: (d) => cluster({ '--upstream': null }, ['--config', join(d, 'no-upstreams.yaml')]), message: /--upstream: \[\] is empty; give at least one upstream resolver/ },
  { what: 'a resolv.conf with only a loopback resolver', args: (d) => cluster({ '--upstream': null }, ['--resolv-conf', join(d, 'resolv-loopback.conf')]), message: /no usable upstream resolver in .*resolv-loopback\.conf: 127\.0\.0\.53 \(loopback or link-local\)/ },
  { what: 'a resolv.conf that does not exist', args: (d) => cluster({ '--upstream': null }, ['--resolv-conf', join(d, 'missing.conf')]), message: /--resolv-conf ".*missing\.conf": cannot read it \(ENOENT\)/ },
  { what: 'a --dns-server that is no address', args: () => cluster({}, ['--dns-server', 'dns.example.net']), message: names('--dns-server', 'dns.example.net') },
  { what: 'a --config that does not exist', args: (d) => cluster({}, ['--config', join(d, 'missing.yaml')]), message: /--config ".*missing\.yaml": cannot read it \(ENOENT\)/ },
  { what: 'a --config that is a directory', args: (d) => cluster({}, ['--config', d]), message: /--config ".*": is not a regular file/ },
  { what: 'a --template that does not exist', args: (d) => cluster({}, ['--template', join(d, 'missing.eta')]), message: /--template ".*missing\.eta": cannot read it \(ENOENT\)/ },
  { what: 'a custom template that closes a block it never opened', args: (d) => cluster({}, ['--template', join(d, 'close-brace.eta')]), message: /template .*close-brace\.eta produced a Corefile CoreDNS would not serve correctly: Corefile line 5: expected a server block "KEY \{", found "\}"/ },
  { what: 'a custom template with an AAAA answer in an A block', args: (d) => cluster({}, ['--template', join(d, 'aaaa-in-a.eta')]), message: /aaaa-in-a\.eta .*answer "\{\{ \.Name \}\} 60 IN AAAA fd00::1" is a AAAA record inside a template for A/ },
  { what: 'a custom template with an answer that is no IP', args: (d) => cluster({}, ['--template', join(d, 'bad-ip-answer.eta')]), message: /bad-ip-answer\.eta .*has "10\.0\.1\.300", not an IPv4 address/ },
  { what: 'a custom template that does not compile', args: (d) => cluster({}, ['--template', join(d, 'eta-syntax.eta')]), message: /template .*eta-syntax\.eta line 2: JavaScript syntax error inside <% %>: /m },
  { what: 'a custom template that throws null', args: (d) => cluster({}, ['--template', join(d, 'throws-null.eta')]), message: /template .*throws-null\.eta line 2 failed: null$/m },
  { what: 'a custom template that throws an object without a prototype', args: (d) => cluster({}, ['--template', join(d, 'throws-bare-object.eta')]), message: /template .*throws-bare-object\.eta line 2 failed: \[object Object\]$/m },
  { what: 'a custom template that throws a string', args: (d) => cluster({}, ['--template', join(d, 'throws-string.eta')]), message: /template .*throws-string\.eta line 2 failed: no upstream for this site$/m },
  { what: 'a custom template that throws a message of 3,000 characters, cut at 200', args: (d) => cluster({}, ['--template', join(d, 'throws-long.eta')]), message: /template .*throws-long\.eta line 2 failed: x{200}…$/m },
  { what: 'a custom template that fails while it runs', args: (d) => cluster({}, ['--template', join(d, 'runtime-error.eta')]), message: /template .*runtime-error\.eta line 3 failed: Cannot read properties of undefined \(reading 'here'\)$/m },
  { what: 'a custom template that returns something other than text', args: (d) => cluster({}, ['--template', join(d, 'not-text.eta')]), message: /template .*not-text\.eta failed: it returned object, not text/ },
  { what: 'a custom template whose Corefile would be 64 MiB', args: (d) => cluster({}, ['--template', join(d, 'huge.eta')]), message: /template .*huge\.eta produced 67108884 characters, more than the 33554432/ },
  { what: 'a custom template that would end lbdns: process is no global of a template', args: (d) => cluster({}, ['--template', join(d, 'exits.eta')]), message: /template .*exits\.eta line 2 failed: process is not defined$/m },
  { what: 'a custom template that would leave a timer running: timers are no globals of a template', args: (d) => cluster({}, ['--template', join(d, 'timer.eta')]), message: /template .*timer\.eta line 3 failed: setTimeout is not defined$/m },
  { what: 'a custom template whose promise callback never ends, under the same time limit', args: (d) => cluster({}, ['--template', join(d, 'endless-callback.eta')]), message: /template .*endless-callback\.eta did not finish within 2 s/ },
  { what: 'a custom template that never ends', args: (d) => cluster({}, ['--template', join(d, 'endless.eta')]), message: /template .*endless\.eta did not finish within 2 s/ },
  { what: 'a YAML alias bomb in the config file', args: (d) => cluster({ '--domain': null }, ['--config', join(d, 'alias-bomb.yaml')]), message: /alias-bomb\.yaml: a1\[0\] is a YAML alias \(\*name\) of an anchor \(&name\)/ },
  { what: 'a config file over 1 MiB', args: (d) => cluster({}, ['--config', join(d, 'too-big.yaml')]), message: /--config ".*too-big\.yaml": is 1100023 bytes; lbdns reads at most 1048576 \(1 MiB\)/ },
  { what: 'a NaN TTL in the config file, named by its key', args: (d) => cluster({}, ['--config', join(d, 'nan-ttl.yaml')]), message: /nan-ttl\.yaml: ttl: NaN is not a finite number/ },
  { what: 'a --config that is a FIFO, without waiting on it', args: (d) => cluster({}, ['--config', join(d, 'fifo')]), message: /--config ".*fifo": is not a regular file/ },
  { what: 'a --template that is a FIFO, without waiting on it', args: (d) => cluster({}, ['--template', join(d, 'fifo')]), message: /--template ".*fifo": is not a regular file/ },
  { what: 'a --resolv-conf that is a FIFO, without waiting on it', args: (d) => cluster({ '--upstream': null }, ['--resolv-conf', join(d, 'fifo')]), message: /--resolv-conf ".*fifo": is not a regular file/ },
  { what: 'a --resolv-conf that is an endless device', args: () => cluster({ '--upstream': null }, ['--resolv-conf', '/dev/zero']), message: /--resolv-conf "\/dev\/zero": is not a regular file/ },
  { what: 'a kubeconfig that is a FIFO, without waiting on it', args: (d) => [join(d, 'fifo'), ...cluster()], message: /kubeconfig ".*fifo": is not a regular file/ },
  { what: 'a kubeconfig that is an endless device', args: () => ['/dev/zero', ...cluster()], message: /kubeconfig "\/dev\/zero": is not a regular file/ },
  { what: 'a kubeconfig over 1 MiB', args: (d) => [join(d, 'too-big.yaml'), ...cluster()], message: /kubeconfig ".*too-big\.yaml": is 1100023 bytes; lbdns reads at most 1048576/ },
  { what: 'a kubeconfig that is no YAML mapping', args: (d) => [join(d, 'not-a-kubeconfig'), ...cluster()], message: /kubeconfig .*not-a-kubeconfig: is not a kubeconfig: not a YAML mapping/ },
  { what: 'a kubeconfig that lists no clusters', args: (d) => [join(d, 'no-clusters.kubeconfig'), ...cluster()], message: /kubeconfig .*no-clusters\.kubeconfig: is not a kubeconfig: it lists no clusters/ },
  { what: 'a kubeconfig whose client certificate file is missing, as a setting to fix, not an outage to wait out', args: (d) => [join(d, 'missing-cert.kubeconfig'), ...cluster()], message: /kubeconfig .*missing-cert\.kubeconfig: cannot read "\/nonexistent\/lbdns\/cert\.pem", which it names \(ENOENT\)/ },
  { what: 'a kubeconfig naming its CA by a path relative to itself, looked for beside it', args: (d) => [join(d, 'relative-ca.kubeconfig'), ...cluster()], message: /kubeconfig .*relative-ca\.kubeconfig: cannot read "\/[^"]*\/no-such-ca\.crt", which it names \(ENOENT\)/ },
  { what: 'a kubeconfig whose exec credential plugin prints nothing, at once and without retrying', args: (d) => [join(d, 'silent-plugin.kubeconfig'), ...cluster()], message: /user "u": its exec credential plugin "\/bin\/true" printed no ExecCredential JSON on stdout/ },
  { what: 'an LB that is a lone dot', args: () => cluster({ '--api-int-lb': ['.'] }), message: /--api-int-lb: "\." is neither an IP address nor a host name/ },
  { what: 'an LB that is a URL', args: () => cluster({ '--api-int-lb': ['http://lb.example.net'] }), message: /--api-int-lb: "http:\/\/lb\.example\.net" is neither an IP address nor a host name/ },
  { what: 'an LB host name that starts with a dash, given as a separate argument', args: () => cluster({ '--api-int-lb': ['-lb.example.net'] }), message: /--api-int-lb: "-lb\.example\.net" has an invalid label "-lb"/ },
  { what: 'an empty --out', args: () => cluster({}, ['--out', '']), message: /--out: "" is empty; give a file path/, withoutOut: true },
  { what: 'an empty out in the config file', args: (d) => cluster({}, ['--config', join(d, 'empty-out.yaml')]), message: /empty-out\.yaml: out: "" is empty; give a file path/, withoutOut: true },
  { what: 'one node spelled three ways with 17 addresses in all', args: () => cluster({}, [...seq(9, (i) => `M0=10.0.5.${i}`).flatMap((v) => ['--node', v]), ...seq(6, (i) => `m0.=10.0.6.${i}`).flatMap((v) => ['--node', v]), ...seq(2, (i) => `m0.c1.example.com=10.0.7.${i}`).flatMap((v) => ['--node', v])]), message: /--node m0: 17 entries exceed the limit of 16/ },
  { what: 'one node spelled two ways with the same address', args: () => cluster({}, ['--node', 'm0=10.0.0.5', '--node', 'M0.C1.example.com.=10.0.0.5']), message: /--node m0: "10\.0\.0\.5" is listed twice/ },
  { what: 'a node named api', args: () => cluster({}, ['--node', 'api=10.0.0.5']), message: /--node: "api" is the API name api\.c1\.example\.com, which only the API load balancers answer for/ },
  { what: 'a node named api-int by its FQDN', args: () => cluster({}, ['--node', 'api-int.c1.example.com=10.0.0.5']), message: /--node: "api-int\.c1\.example\.com" is the API name/ },
  { what: 'a node named the cluster domain', args: () => cluster({}, ['--node', 'c1.example.com=10.0.0.5']), message: /--node: "c1\.example\.com" is the cluster domain itself/ },
  { what: 'a node named apps', args: () => cluster({}, ['--node', 'apps=10.0.0.5']), message: /--node: "apps" is apps\.c1\.example\.com, the apex of \*\.apps/ },
  { what: 'a node under apps', args: () => cluster({}, ['--node', 'x.apps=10.0.0.5']), message: /--node: "x\.apps" lies under \*\.apps\.c1\.example\.com/ },
  { what: 'a node whose name as served is longer than 253 characters', args: () => cluster({}, ['--node', `${seq(4, () => 'n'.repeat(60)).join('.')}=10.0.0.5`]), message: /--node: .* gives the name .* longer than DNS's 253 characters/ },
  { what: 'a domain that makes api-int.<domain> longer than 253 characters', args: () => cluster({ '--domain': [`${seq(4, () => 'd'.repeat(61)).join('.')}.net`] }), message: /--domain: .* is too long: api-int\.<domain>, which lbdns serves, would be 259 characters/ },
  { what: 'an invalid xn-- label', args: () => cluster({ '--api-int-lb': ['xn--wi.example.test'] }), message: /--api-int-lb: "xn--wi\.example\.test" has the label "xn--wi", which is not valid Punycode/ },
  { what: 'a non-ASCII letter that lower-cases to ASCII', args: () => cluster({}, ['--node', 'wor\u212aer-0=10.0.0.5']), message: /--node: "wor\\u212aer-0" has the non-ASCII character U\+212A/ },
  { what: '--listen without a port', args: () => cluster({}, ['--listen', '127.0.0.1']), message: /--listen: "127\.0\.0\.1" is not \[ADDR\]:PORT/ },
  { what: '--listen with a host name', args: () => cluster({}, ['--listen', 'localhost:5353']), message: /--listen: "localhost:5353" is not \[ADDR\]:PORT/ },
  { what: "--listen on CoreDNS's health port", args: () => cluster({}, ['--listen', ':18080']), message: /--listen: ":18080" uses port 18080, which CoreDNS's health endpoint listens on/ },
  { what: '--listen on port 0', args: () => cluster({}, ['--listen', ':0']), message: /--listen: ":0" is not \[ADDR\]:PORT/ },
  { what: 'a negative TTL, given as a separate argument', args: () => cluster({}, ['--ttl', '-1']), message: /--ttl: "-1" is not a whole number from 1 to 65535/ },
  { what: '--diff without --out', args: () => cluster({}, ['--diff']), message: /--diff compares with the file on disk: give --out FILE/, withoutOut: true },
  { what: 'an unknown flag', args: () => cluster({}, ['--api-lbs', '10.0.0.10']), message: /Unsupported option name \("--api-lbs"\)/ },
  { what: 'a flag without its value', args: () => [...cluster(), '--domain'], message: /Not enough arguments to option --domain/ },
];

const PREVIOUS = '# the Corefile CoreDNS serves now\n. {\n    forward . 10.0.0.2\n}\n';
// A time no run of the test could produce, so any write would show.
const OLD_MTIME = new Date('2001-02-03T04:05:06Z');

let root: string;
let inputs: string;
let caseNo = 0;

test.before(async () => {
  root = await mkdtemp(join(tmpdir(), 'lbdns-bad-input-'));
  inputs = join(root, 'inputs');
  await mkdir(inputs);
  for (const [name, text] of Object.entries(FILES)) await writeFile(join(inputs, name), text);
  // A reader that waited for a writer would hang the case: there is none.
  await promisify(execFile)('mkfifo', [join(inputs, 'fifo')]);
});

test.after(async () => {
  await rm(root, { recursive: true, force: true });
});

async function freshDir(): Promise<string> {
  const dir = join(root, `out-${++caseNo}`);
  await mkdir(dir);
  return dir;
}

function assertRefused(r: { code: number; stdout: string; stderr: string }, message: RegExp): void {
  assert.is(r.code, 2, `exit code; stderr: ${r.stderr}`);
  assert.is(r.stdout, '', 'stdout');
  assert.match(r.stderr, message, `stderr: ${r.stderr}`);
}

test('an LBDNS_LOG_LEVEL that is no level is refused with exit 2, naming the accepted ones, before anything is written', async () => {
  const saved = process.env.LBDNS_LOG_LEVEL;
  process.env.LBDNS_LOG_LEVEL = 'verbose';
  try {
    const r = await runLbdns(['render-corefile', '--example']);
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, 'LBDNS_LOG_LEVEL: "verbose" is not a log level; use one of debug, info, warn, error');
    assert.is(r.stdout, '');
  } finally {
    if (saved === undefined) delete process.env.LBDNS_LOG_LEVEL;
    else process.env.LBDNS_LOG_LEVEL = saved;
  }
});

test('watch-lb-status does not offer --example, which it cannot watch: exit 2 before anything is done', async () => {
  const r = await runLbdns(['watch-lb-status', '--example', '--out', join(root, 'never')]);
  assertRefused(r, /Unsupported option name \("--example"\)/);
  assert.not.match((await runLbdns(['watch-lb-status', '--help'])).stdout, '--example');
});

test(`the table covers at least 35 bad inputs (${CASES.length})`, () => {
  assert.ok(CASES.length >= 35);
});

test('the valid cluster the cases start from renders', async () => {
  const r = await runLbdns(['render-corefile', ...cluster()]);
  assert.is(r.code, 0, r.stderr);
});

for (const c of CASES) {
  test(`refuses ${c.what}: exit 2, names it, leaves an existing --out alone`, async () => {
    const dir = await freshDir();
    const out = join(dir, 'Corefile');
    await writeFile(out, PREVIOUS);
    await utimes(out, OLD_MTIME, OLD_MTIME);
    const r = await runLbdns(['render-corefile', ...c.args(inputs), ...(c.withoutOut ? [] : ['--out', out])]);
    assertRefused(r, c.message);
    assert.is(await readFile(out, 'utf8'), PREVIOUS);
    assert.is((await stat(out)).mtimeMs, OLD_MTIME.getTime());
    assert.equal(await readdir(dir), ['Corefile'], 'no temp file is left next to it');
  });

  if (!c.withoutOut) {
    test(`refuses ${c.what}: creates no --out file and no temp file`, async () => {
      const dir = await freshDir();
      const r = await runLbdns(['render-corefile', ...c.args(inputs), '--out', join(dir, 'Corefile')]);
      assertRefused(r, c.message);
      assert.equal(await readdir(dir), []);
    });
  }
}

for (const input of ['--config', '--template', '--resolv-conf'] as const) {
  test(`an --out that is the ${input} file lbdns reads is refused with exit 2, the input left as it was`, async () => {
    const dir = await freshDir();
    const file = join(dir, 'input');
    const content = { '--config': 'domain: c1.example.com\n', '--template': await readFile(join(ROOT_TEMPLATES, 'corefile.eta'), 'utf8'), '--resolv-conf': 'nameserver 10.0.0.2\n' }[input];
    await writeFile(file, content);
    const r = await runLbdns(['render-corefile', ...cluster(input === '--resolv-conf' ? { '--upstream': null } : {}), input, file, '--out', file]);
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, `--out "${file}" is the same file as ${input} "${file}", which lbdns reads; nothing was written`);
    assert.is(await readFile(file, 'utf8'), content);
  });
}

test('a --dnsmasq-out that is the --config file is refused with exit 2, the config left as it was', async () => {
  const dir = await freshDir();
  const config = join(dir, 'cluster.yaml');
  await writeFile(config, 'domain: c1.example.com\n');
  const r = await runLbdns(['render-corefile', ...cluster(), '--listen', '127.0.0.1:5353', '--config', config, '--out', join(dir, 'Corefile'), '--dnsmasq-out', config]);
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, 'is the same file as --config');
  assert.equal(await readdir(dir), ['cluster.yaml']);
});

test('without a cluster to read, an --out at the path $KUBECONFIG names is written: nothing reads it', async () => {
  const dir = await freshDir();
  const out = join(dir, 'Corefile');
  const saved = process.env.KUBECONFIG;
  process.env.KUBECONFIG = out;
  try {
    const r = await runLbdns(['render-corefile', ...cluster(), '--out', out]);
    assert.is(r.code, 0, r.stderr);
  } finally {
    if (saved === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = saved;
  }
});

test('a kubeconfig given both as the argument and as --kubeconfig is refused with exit 2', async () => {
  const r = await runLbdns(['render-corefile', 'one.kubeconfig', '--kubeconfig', 'other.kubeconfig']);
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, '--kubeconfig and the KUBECONFIG argument are both given');
});

test('an --out that is a directory is refused with exit 2 before anything is written: no zone or weight file beside it', async () => {
  const dir = await freshDir();
  await mkdir(join(dir, 'Corefile'));
  const r = await runLbdns(['render-corefile', '--example', '--gateway-zone', 'gw.example.com', '--out', join(dir, 'Corefile')]);
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, /--out ".*Corefile": is a directory; nothing was written/);
  assert.equal(await readdir(dir), ['Corefile']);
});

test('--diff with an --out that is a FIFO is refused with exit 2 at once, not waited on', async () => {
  const r = await runLbdns(['render-corefile', ...cluster(), '--diff', '--out', join(inputs, 'fifo')]);
  assertRefused(r, /--out ".*fifo": is not a regular file/);
});

test('--diff with an --out that is a device is refused with exit 2, not read whole', async () => {
  const r = await runLbdns(['render-corefile', ...cluster(), '--diff', '--out', '/dev/zero']);
  assertRefused(r, /--out "\/dev\/zero": is not a regular file/);
});

/** A kubeconfig whose API server never answers: a check that waited for it would take the whole --wait-timeout. */
async function unreachableKubeconfig(dir: string): Promise<string> {
  const path = join(dir, 'unreachable.kubeconfig');
  const config = 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n';
  await writeFile(path, config);
  return path;
}

const BEFORE_THE_CLUSTER: readonly { what: string; args: (dir: string, kubeconfig: string) => Promise<string[]>; message: RegExp }[] = [
  { what: 'render-corefile with a --template that does not exist', args: async (d, kc) => ['render-corefile', kc, '--template', join(d, 'missing.eta'), '--out', join(d, 'Corefile')], message: /--template ".*missing\.eta": cannot read it \(ENOENT\)/ },
  { what: 'render-corefile with an --out that is a directory', args: async (d, kc) => (await mkdir(join(d, 'Corefile')), ['render-corefile', kc, '--out', join(d, 'Corefile')]), message: /--out ".*Corefile": is a directory/ },
  { what: 'watch-lb-status with an --out that is a directory', args: async (d, kc) => (await mkdir(join(d, 'Corefile')), ['watch-lb-status', kc, '--out', join(d, 'Corefile'), '--metrics-addr', '127.0.0.1:0']), message: /--out ".*Corefile": is a directory/ },
  { what: 'render-dnsmasq without --listen (CoreDNS on port 53 beside dnsmasq)', args: async (d, kc) => ['render-dnsmasq', kc, '--domain', 'c1.example.com', '--out', join(d, 'lbdns.conf')], message: /pass --listen with another port/ },
  { what: 'render-corefile with a --dns-server that is no address', args: async (d, kc) => ['render-corefile', kc, '--dns-server', 'dns.example.net', '--out', join(d, 'Corefile')], message: /--dns-server: "dns\.example\.net" is not a DNS server address/ },
  { what: 'render-corefile with a config file whose ttl is 0', args: async (d, kc) => (await writeFile(join(d, 'c.yaml'), 'ttl: 0\n'), ['render-corefile', kc, '--config', join(d, 'c.yaml'), '--out', join(d, 'Corefile')]), message: /--ttl: 0/ },
  { what: 'watch-lb-status with a config file whose ttl is 0', args: async (d, kc) => (await writeFile(join(d, 'c.yaml'), 'ttl: 0\n'), ['watch-lb-status', kc, '--config', join(d, 'c.yaml'), '--out', join(d, 'Corefile'), '--metrics-addr', '127.0.0.1:0']), message: /--ttl: 0/ },
  { what: 'watch-lb-status with an --out whose directory does not exist', args: async (d, kc) => ['watch-lb-status', kc, '--out', join(d, 'missing', 'Corefile'), '--metrics-addr', '127.0.0.1:0'], message: /--out ".*Corefile": its directory ".*missing" does not exist/ },
  { what: 'render-corefile with an --upstream that is CoreDNS itself', args: async (d, kc) => ['render-corefile', kc, '--upstream', '127.0.0.1', '--out', join(d, 'Corefile')], message: /--upstream: "127\.0\.0\.1" is CoreDNS itself \(it listens on every address of this host, port 53\)/ },
];

for (const c of BEFORE_THE_CLUSTER) {
  test(`${c.what} is refused with exit 2 before the API server is asked, not after --wait-timeout`, async () => {
    const dir = await freshDir();
    const kubeconfig = await unreachableKubeconfig(dir);
    const started = Date.now();
    const r = await runLbdns([...(await c.args(dir, kubeconfig)), '--wait-timeout', '60s']);
    assertRefused(r, c.message);
    assert.ok(Date.now() - started < 20_000, `took ${Date.now() - started} ms`);
  });
}

for (const [what, upstream, listen] of [['its --listen address and port', '127.0.0.2:5353', '127.0.0.2:5353'], ['this host, on the port it listens on at every address', '0.0.0.0', undefined], ['this host by IPv6 loopback', '[::1]:5353', ':5353']] as const) {
  test(`an --upstream that is CoreDNS itself (${what}) is refused with exit 2: its forwards would loop`, async () => {
    const r = await runLbdns(['render-corefile', ...cluster({ '--upstream': [upstream] }), ...(listen === undefined ? [] : ['--listen', listen])]);
    assertRefused(r, /--upstream: .* is CoreDNS itself \(it listens on .*\): every query it forwards would come back to it/);
  });
}

test('an --upstream on this host at another port than CoreDNS listens on is a resolver of its own, and accepted', async () => {
  const r = await runLbdns(['render-corefile', ...cluster({ '--upstream': ['127.0.0.1:5353'] })]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, 'forward . 127.0.0.1:5353');
});

test('a Gateway zone file whose path is a directory is refused with exit 2 before the Corefile is written', async () => {
  const dir = await freshDir();
  await mkdir(join(dir, 'gw.example.com.zone'));
  const r = await runLbdns(['render-corefile', '--example', '--gateway-zone', 'gw.example.com', '--out', join(dir, 'Corefile')]);
  assertRefused(r, /the Gateway file beside --out ".*gw\.example\.com\.zone": is a directory/);
  assert.equal(await readdir(dir), ['gw.example.com.zone']);
});

test('render-dnsmasq into a directory that does not exist is refused with exit 2, and creates none', async () => {
  const dir = await freshDir();
  const r = await runLbdns(['render-dnsmasq', '--example', '--listen', '127.0.0.1:5353', '--out', join(dir, 'missing', 'lbdns.conf')]);
  assertRefused(r, /--out ".*lbdns\.conf": its directory ".*missing" does not exist/);
  assert.equal(await readdir(dir), []);
});

test('an --out that is a symlink to a missing file is refused with exit 2 before the Gateway files beside it are written', async () => {
  const dir = await freshDir();
  await symlink(join(dir, 'missing', 'Corefile'), join(dir, 'Corefile'));
  const r = await runLbdns(['render-corefile', '--example', '--gateway-zone', 'gw.example.com', '--out', join(dir, 'Corefile')]);
  assertRefused(r, /--out ".*Corefile": is a symlink whose target does not exist/);
  assert.equal(await readdir(dir), ['Corefile']);
});

test("a dnsmasq drop-in whose hosts directory is a symlink to nothing is refused with exit 2, nothing written", async () => {
  const dir = await freshDir();
  await symlink(join(dir, 'nowhere'), join(dir, 'lbdns.hosts'));
  const r = await runLbdns(['render-dnsmasq', '--example', '--listen', '127.0.0.1:5353', '--out', join(dir, 'lbdns.conf')]);
  assertRefused(r, /--out's hosts directory ".*lbdns\.hosts" is a symlink whose target does not exist or loops/);
  assert.equal(await readdir(dir), ['lbdns.hosts']);
});

test("a dnsmasq drop-in whose hosts directory is a file is refused with exit 2, nothing written", async () => {
  const dir = await freshDir();
  await writeFile(join(dir, 'lbdns.hosts'), '');
  const r = await runLbdns(['render-dnsmasq', '--example', '--listen', '127.0.0.1:5353', '--out', join(dir, 'lbdns.conf')]);
  assertRefused(r, /--out's hosts directory ".*lbdns\.hosts" exists and is not a directory/);
  assert.equal(await readdir(dir), ['lbdns.hosts']);
});

const SAME_FILE: readonly { what: string; args: (dir: string) => string[]; message: RegExp }[] = [
  { what: "an --out that is the Gateway weight file's path", args: (d) => ['--gateway-zone', 'gw.example.com', '--out', join(d, 'Corefile.weights')], message: /the Gateway weight file ".*Corefile\.weights" is the same file as --out/ },
  { what: "an --out that is a Gateway zone file's path", args: (d) => ['--gateway-zone', 'gw.example.com', '--out', join(d, 'gw.example.com.zone')], message: /the zone file of gw\.example\.com ".*gw\.example\.com\.zone" is the same file as --out/ },
  { what: 'a --dnsmasq-out that is --out', args: (d) => ['--listen', '127.0.0.1:5353', '--out', join(d, 'Corefile'), '--dnsmasq-out', join(d, 'Corefile')], message: /--dnsmasq-out ".*Corefile" is the same file as --out/ },
  { what: "an --out that is the dnsmasq drop-in's hosts directory", args: (d) => ['--listen', '127.0.0.1:5353', '--out', join(d, 'lbdns.hosts'), '--dnsmasq-out', join(d, 'lbdns.conf')], message: /--dnsmasq-out's hosts directory ".*lbdns\.hosts" is the same file as --out/ },
];

for (const c of SAME_FILE) {
  test(`${c.what} is refused with exit 2 before anything is written`, async () => {
    const dir = await freshDir();
    const r = await runLbdns(['render-corefile', '--example', ...c.args(dir)]);
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, c.message);
    assert.equal(await readdir(dir), []);
  });
}

test('a --dnsmasq-out that is a symlink to the --out not written yet is refused with exit 2, nothing written', async () => {
  const dir = await freshDir();
  await symlink(join(dir, 'Corefile'), join(dir, 'lbdns.conf'));
  const r = await runLbdns(['render-corefile', '--example', '--listen', '127.0.0.1:5353', '--out', join(dir, 'Corefile'), '--dnsmasq-out', join(dir, 'lbdns.conf')]);
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, /--dnsmasq-out ".*lbdns\.conf": is a symlink whose target does not exist/);
  assert.equal(await readdir(dir), ['lbdns.conf']);
});

test('an --out reached through a symlinked directory, the same file as --dnsmasq-out, is refused with exit 2, nothing written', async () => {
  const dir = await freshDir();
  await mkdir(join(dir, 'real'));
  await symlink(join(dir, 'real'), join(dir, 'link'));
  const r = await runLbdns(['render-corefile', '--example', '--listen', '127.0.0.1:5353', '--out', join(dir, 'link', 'Corefile'), '--dnsmasq-out', join(dir, 'real', 'Corefile')]);
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, /is the same file as --out/);
  assert.equal(await readdir(join(dir, 'real')), []);
});

test('a --dnsmasq-out that reaches --out through a symlink is refused with exit 2, the Corefile left as it was', async () => {
  const dir = await freshDir();
  await writeFile(join(dir, 'Corefile'), PREVIOUS);
  await symlink(join(dir, 'Corefile'), join(dir, 'lbdns.conf'));
  const r = await runLbdns(['render-corefile', '--example', '--listen', '127.0.0.1:5353', '--out', join(dir, 'Corefile'), '--dnsmasq-out', join(dir, 'lbdns.conf')]);
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, /--dnsmasq-out ".*lbdns\.conf" is the same file as --out/);
  assert.is(await readFile(join(dir, 'Corefile'), 'utf8'), PREVIOUS);
});

test('a --dnsmasq-out naming a directory (a trailing slash) is refused with exit 2 before the Corefile is written', async () => {
  const dir = await freshDir();
  const r = await runLbdns(['render-corefile', '--example', '--listen', '127.0.0.1:5353', '--out', join(dir, 'Corefile'), '--dnsmasq-out', `${dir}/`]);
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, /--dnsmasq-out ".*\/": names a directory; nothing was written/);
  assert.equal(await readdir(dir), []);
});

test.run();
