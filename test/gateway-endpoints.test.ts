/**
 * The endpoints lbdns builds for a DNSPolicy are those of Kuadrant's builder (dns-operator
 * pkg/builder), field by field; the cases and values are those of its unit tests
 * (endpoints_test.go: cluster id fbf71c44-…, Gateway TestName/TestNamespace, geo IE, weight 120).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildEndpoints, ClusterIdUnknown, shortCode, type BuildTarget } from '../lib/sources/gateway-endpoints.js';
import { servedEndpoints } from '../lib/sources/served-endpoints.js';
import { dnsPolicyEndpoints } from '../lib/sources/dnspolicies.js';
import { kuadrantRecordEndpoints } from '../lib/sources/kuadrant-dnsrecords.js';
import type { Endpoint, KuadrantEndpoint } from '../lib/model.js';
import { GatewayInputs } from '../lib/sources/gateway-sources.js';
import { gatewayProjection, gatewayView, type Gateway } from '../lib/sources/gateways.js';
import { dnsPolicy, gateway, KUBE_SYSTEM, ZONE } from './support/gateway-fixture.js';

const ID = 'fbf71c44-6b37-4962-ace6-801912e769be';
const HOST = 'test.example.com';
const LEAF = '2q5hyv-a8xcra.klb.test.example.com';
const ip = (value: string): Endpoint => ({ kind: 'ip', ip: value });
const hostname = (value: string): Endpoint => ({ kind: 'hostname', hostname: value });
const target = (addresses: readonly Endpoint[], clusterId: string | null = ID): BuildTarget => ({ name: 'TestName', namespace: 'TestNamespace', addresses, clusterId: clusterId ?? undefined });
const TWO_IPS = [ip('127.0.0.1'), ip('127.0.0.2')];
const IE = { weight: 120, geo: 'IE', defaultGeo: true };

const e = (dnsName: string, recordType: KuadrantEndpoint['recordType'], targets: string[], recordTTL: number, setIdentifier = '', providerSpecific: { name: string; value: string }[] = []): KuadrantEndpoint => ({ dnsName, recordType, targets, recordTTL, setIdentifier, providerSpecific });

test('shortCode is the first 6 characters of base-36 sha224, as Kuadrant checks it', () => {
  assert.is(shortCode(ID), '2q5hyv');
  assert.is(shortCode('TestName-TestNamespace'), 'a8xcra');
});

test('simple: the host answers every IP address in one A record, TTL 60', () => {
  assert.equal(buildEndpoints(HOST, target(TWO_IPS), undefined), [e(HOST, 'A', ['127.0.0.1', '127.0.0.2'], 60)]);
});

test('simple: a wildcard host is built as written', () => {
  assert.equal(buildEndpoints('*.example.com', target(TWO_IPS), undefined), [e('*.example.com', 'A', ['127.0.0.1', '127.0.0.2'], 60)]);
});

test('simple: Hostname addresses are one CNAME holding every one of them', () => {
  assert.equal(buildEndpoints(HOST, target([hostname('pat.the.cat'), hostname('lb.example.org')]), undefined), [e(HOST, 'CNAME', ['pat.the.cat', 'lb.example.org'], 60)]);
});

test('simple: IP and Hostname addresses give an A and a CNAME on the host, as Kuadrant builds them', () => {
  assert.equal(buildEndpoints(HOST, target([ip('127.0.0.1'), hostname('pat.the.cat')]), undefined), [e(HOST, 'A', ['127.0.0.1'], 60), e(HOST, 'CNAME', ['pat.the.cat'], 60)]);
});

test("simple: the TTL is DNS_DEFAULT_TTL's", () => {
  assert.equal(buildEndpoints(HOST, target(TWO_IPS), undefined, { ttl: 123, loadBalancedTtl: 234 }), [e(HOST, 'A', ['127.0.0.1', '127.0.0.2'], 123)]);
});

test('load-balanced with a default geo: leaf, weighted geo CNAME, geo and default CNAMEs, host CNAME, sorted by name and set identifier', () => {
  assert.equal(buildEndpoints(HOST, target(TWO_IPS), IE), [
    e(LEAF, 'A', ['127.0.0.1', '127.0.0.2'], 60),
    e('ie.klb.test.example.com', 'CNAME', [LEAF], 60, LEAF, [{ name: 'weight', value: '120' }]),
    e('klb.test.example.com', 'CNAME', ['ie.klb.test.example.com'], 300, 'IE', [{ name: 'geo-code', value: 'IE' }]),
    e('klb.test.example.com', 'CNAME', ['ie.klb.test.example.com'], 300, 'default', [{ name: 'geo-code', value: '*' }]),
    e(HOST, 'CNAME', ['klb.test.example.com'], 300),
  ]);
});

test('load-balanced without a default geo: no default CNAME', () => {
  const built = buildEndpoints(HOST, target(TWO_IPS), { ...IE, defaultGeo: false });
  assert.equal(built.map((x) => `${x.dnsName} ${x.setIdentifier}`), [`${LEAF} `, `ie.klb.test.example.com ${LEAF}`, 'klb.test.example.com IE', `${HOST} `]);
});

test('load-balanced: a wildcard host names klb after the host without "*."', () => {
  const built = buildEndpoints('*.example.com', target(TWO_IPS), IE);
  assert.equal(built.map((x) => x.dnsName), ['*.example.com', '2q5hyv-a8xcra.klb.example.com', 'ie.klb.example.com', 'klb.example.com', 'klb.example.com']);
  assert.equal(built[0]?.targets, ['klb.example.com']);
});

test("load-balanced: the TTLs are DNS_DEFAULT_TTL's below the geo and DNS_DEFAULT_LB_TTL's at and above it", () => {
  const built = buildEndpoints(HOST, target(TWO_IPS), IE, { ttl: 123, loadBalancedTtl: 234 });
  assert.equal(built.map((x) => x.recordTTL), [123, 123, 234, 234, 234]);
});

test('load-balanced: every Hostname address and the IP leaf are weighted targets of the geo name', () => {
  const built = buildEndpoints(HOST, target([hostname('a.lb.example.org'), ip('127.0.0.1'), hostname('b.lb.example.org')]), IE);
  const weighted = built.filter((x) => x.dnsName === 'ie.klb.test.example.com');
  assert.equal(weighted.map((x) => [x.targets, x.setIdentifier]), [
    [[LEAF], LEAF],
    [['a.lb.example.org'], 'a.lb.example.org'],
    [['b.lb.example.org'], 'b.lb.example.org'],
  ]);
});

test('load-balanced: a geo code is lower-cased in names and kept as written in the set identifier and geo-code', () => {
  const built = buildEndpoints(HOST, target(TWO_IPS), { weight: 10, geo: 'Eu-West', defaultGeo: false });
  const geo = built.find((x) => x.setIdentifier === 'Eu-West');
  assert.equal([geo?.targets, geo?.providerSpecific], [['eu-west.klb.test.example.com'], [{ name: 'geo-code', value: 'Eu-West' }]]);
});

test('no address: no endpoint, simple or load-balanced', () => {
  assert.equal(buildEndpoints(HOST, target([]), undefined), []);
  assert.equal(buildEndpoints(HOST, target([]), IE), []);
});

test('load-balanced IP addresses need the cluster id: built only once it is known', () => {
  assert.throws(() => buildEndpoints(HOST, target(TWO_IPS, null), IE), (err: unknown) => err instanceof ClusterIdUnknown);
  assert.is(buildEndpoints(HOST, target([hostname('a.lb.example.org')], null), IE).length, 4);
});

test('served: IPv6 addresses in an A record are served as AAAA, and said so', () => {
  const { endpoints, notes } = servedEndpoints([e(HOST, 'A', ['192.0.2.1', 'fd00::1'], 60)]);
  assert.equal(endpoints[0]?.map((x) => [x.recordType, x.targets]), [['A', ['192.0.2.1']], ['AAAA', ['fd00::1']]]);
  assert.match(notes[0] ?? '', /IPv6 addresses in an A record: serving fd00::1 as AAAA/);
});

test('served: a CNAME with several targets serves its first, and says so', () => {
  const { endpoints, notes } = servedEndpoints([e(HOST, 'CNAME', ['a.example.org', 'b.example.org'], 60)]);
  assert.equal(endpoints[0]?.map((x) => x.targets), [['a.example.org']]);
  assert.match(notes[0] ?? '', /serving the first \(a\.example\.org\) of 2/);
});

test('served: a simple host with an A and a CNAME serves the A only, and says why', () => {
  const { endpoints, notes } = servedEndpoints(buildEndpoints(HOST, target([ip('127.0.0.1'), hostname('pat.the.cat')]), undefined));
  assert.equal(endpoints.map((x) => x.map((y) => y.recordType)), [['A'], []]);
  assert.equal(notes[0], undefined);
  assert.match(notes[1] ?? '', /a CNAME cannot share a name: not served/);
});

test('served: providerSpecific weight and geo-code become the served weight and geo', () => {
  const { endpoints } = servedEndpoints(buildEndpoints(HOST, target(TWO_IPS), IE));
  const flat = endpoints.flat();
  assert.equal(flat.find((x) => x.dnsName === 'ie.klb.test.example.com')?.weight, 120);
  assert.equal(flat.filter((x) => x.dnsName === 'klb.test.example.com').map((x) => x.geo), ['IE', '*']);
});

test("served: an endpoint with a weight and a geo-code is weighted, its geo-code not read, as Kuadrant's CoreDNS plugin reads it", () => {
  const both = [{ name: 'geo-code', value: 'IE' }, { name: 'weight', value: '50' }];
  const served = servedEndpoints([e('x.example.com', 'CNAME', ['a.example.net'], 60, 'a', both)]).endpoints.flat();
  assert.equal(served.map((x) => [x.weight, x.geo]), [[50, undefined]]);
});

test("a labelled Kuadrant DNSRecord being deleted is served until it is gone, as Kuadrant's plugin serves every record its informer holds", () => {
  const record = {
    metadata: { namespace: 'ns', name: 'r', creationTimestamp: '2026-01-01T00:00:00Z', deletionTimestamp: '2026-02-01T00:00:00Z', labels: { 'kuadrant.io/coredns-zone-name': 'example.com' } },
    spec: { rootHost: 'x.example.com', endpoints: [{ dnsName: 'x.example.com', recordType: 'A', targets: ['192.0.2.1'], recordTTL: 60 }] },
  };
  const { owners } = kuadrantRecordEndpoints([record], ['example.com'], () => undefined);
  assert.equal(owners.flatMap((o) => o.endpoints.map((x) => [x.dnsName, x.targets])), [['x.example.com', ['192.0.2.1']]]);
});

test("a Kuadrant DNSRecord endpoint whose recordTTL is a string, not the CRD's int64, is not served, with a warning", () => {
  const record = {
    metadata: { namespace: 'ns', name: 'r', creationTimestamp: '2026-01-01T00:00:00Z', labels: { 'kuadrant.io/coredns-zone-name': 'example.com' } },
    spec: { rootHost: 'x.example.com', endpoints: [{ dnsName: 'x.example.com', recordType: 'A', targets: ['192.0.2.1'], recordTTL: '60' }] },
  };
  const warnings: string[] = [];
  const { owners } = kuadrantRecordEndpoints([record], ['example.com'], (msg) => warnings.push(msg));
  assert.equal(owners.flatMap((o) => o.endpoints), []);
  assert.ok(warnings.some((w) => w.includes('recordTTL') && w.includes('is not a number')), warnings.join('\n'));
});

test("a Kuadrant DNSRecord with thousands of bad entries gives 16 warnings and a count of the rest; another record's warnings are all given", () => {
  const record = (name: string, targets: readonly string[]) => ({
    metadata: { namespace: 'ns', name, creationTimestamp: '2026-01-01T00:00:00Z', labels: { 'kuadrant.io/coredns-zone-name': 'example.com' } },
    spec: { rootHost: `${name}.example.com`, endpoints: [{ dnsName: `${name}.example.com`, recordType: 'A', targets, recordTTL: 60 }] },
  });
  const warnings: string[] = [];
  const { owners } = kuadrantRecordEndpoints([record('flood', Array.from({ length: 5000 }, () => '192.0.2.1')), record('other', ['192.0.2.7', '192.0.2.7'])], ['example.com'], (msg) => warnings.push(msg));
  assert.equal(owners.map((o) => o.endpoints[0]?.targets), [['192.0.2.1'], ['192.0.2.7']]);
  const flood = warnings.filter((w) => w.startsWith('dnsrecord.kuadrant.io ns/flood '));
  assert.is(flood.length, 17);
  assert.is(flood[16], 'dnsrecord.kuadrant.io ns/flood spec.endpoints[0].targets[17] and on: 4983 more warnings about the same object, not shown');
  assert.is(warnings.filter((w) => w.startsWith('dnsrecord.kuadrant.io ns/other ')).length, 1);
});

const address = (endpoint: Endpoint, value = endpoint.kind === 'ip' ? endpoint.ip : endpoint.hostname) => ({ endpoint, value });
type PolicySpec = Parameters<typeof dnsPolicyEndpoints>[0]['policies'][number];
const policy = (name: string, created: string, sectionName?: string, spec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): PolicySpec => ({
  metadata: { namespace: 'ns', name, creationTimestamp: created, ...meta },
  spec: { targetRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw', ...(sectionName === undefined ? {} : { sectionName }) }, ...spec },
});
/** Which policy serves which of the Gateway's listeners a and b, as `policy:listener`. */
function servedBy(policies: readonly PolicySpec[], addresses = [address(ip('10.0.0.1'))]) {
  const owners = dnsPolicyEndpoints(
    {
      policies,
      gateways: [{ id: { namespace: 'ns', name: 'gw', created: 'x' }, listeners: ['a', 'b'].map((l) => ({ name: l, hostname: `${l}.example.com`, attachedRoutes: 1 })), addresses }],
      zones: ['example.com'],
      kuadrantHosts: new Set(),
      clusterId: ID,
      ttls: { ttl: 60, loadBalancedTtl: 300 },
    },
    () => undefined,
  );
  return { by: owners.map((o) => o.source.replace(/^dnspolicy\/ns\/(.*):gateway\/gw\/(.*)$/, '$1:$2')), targets: owners.flatMap((o) => o.endpoints.flatMap((x) => x.targets)) };
}
const BAD_CIDR = { excludeAddresses: ['10.0.0.0/33'] };

test('policy choice: a listener takes the oldest policy naming its section, the others the oldest naming the Gateway', () => {
  assert.equal(servedBy([policy('gw-new', '2026-01-02T00:00:00Z'), policy('gw-old', '2026-01-01T00:00:00Z'), policy('for-b', '2026-01-03T00:00:00Z', 'b')]).by, ['gw-old:a', 'for-b:b']);
});

test("a policy's claim is as old as the newer of the policy and its Gateway: an old policy does not make a new Gateway's hosts old", () => {
  const owners = (gatewayCreated: string) =>
    dnsPolicyEndpoints(
      {
        policies: [policy('old', '2026-01-01T00:00:00Z')],
        gateways: [{ id: { namespace: 'ns', name: 'gw', created: gatewayCreated }, listeners: [{ name: 'a', hostname: 'a.example.com', attachedRoutes: 1 }], addresses: [address(ip('10.0.0.1'))] }],
        zones: ['example.com'],
        kuadrantHosts: new Set(),
        clusterId: ID,
        ttls: { ttl: 60, loadBalancedTtl: 300 },
      },
      () => undefined,
    ).map((o) => o.created);
  assert.equal(owners('2026-03-05T00:00:00Z'), ['2026-03-05T00:00:00Z']);
  assert.equal(owners('2025-12-01T00:00:00Z'), ['2026-01-01T00:00:00Z']);
});

test("policy choice: a listener's own policy that fails validation keeps the Gateway's policy off that listener, as in Kuadrant", () => {
  assert.equal(servedBy([policy('gw', '2026-01-01T00:00:00Z'), policy('for-b', '2026-01-02T00:00:00Z', 'b', BAD_CIDR)]).by, ['gw:a']);
});

test('policy choice: a newer policy on the target of an older one that fails validation is a conflict too, as in Kuadrant', () => {
  assert.equal(servedBy([policy('old', '2026-01-01T00:00:00Z', undefined, BAD_CIDR), policy('new', '2026-01-02T00:00:00Z')]).by, []);
});

test("policy choice: a listener's own policy being deleted keeps the Gateway's policy off that listener until it is gone", () => {
  assert.equal(servedBy([policy('gw', '2026-01-01T00:00:00Z'), policy('for-b', '2026-01-02T00:00:00Z', 'b', {}, { deletionTimestamp: '2026-01-03T00:00:00Z' })]).by, ['gw:a']);
});

test('policy choice: of two policies created the same second, the first by name is applied, and the warning says so rather than calling it older', () => {
  const warnings: string[] = [];
  const owners = dnsPolicyEndpoints(
    {
      policies: [policy('b', '2026-01-01T00:00:00Z'), policy('a', '2026-01-01T00:00:00Z')],
      gateways: [{ id: { namespace: 'ns', name: 'gw', created: 'x' }, listeners: [{ name: 'a', hostname: 'a.example.com', attachedRoutes: 1 }], addresses: [address(ip('10.0.0.1'))] }],
      zones: ['example.com'],
      kuadrantHosts: new Set(),
      clusterId: ID,
      ttls: { ttl: 60, loadBalancedTtl: 300 },
    },
    (msg) => warnings.push(msg),
  );
  assert.equal(owners.map((o) => o.source), ['dnspolicy/ns/a:gateway/gw/a']);
  assert.match(warnings.join('\n'), 'targets what the dnspolicy ns/a, created the same second and first by name, already targets');
});

test('policy choice: an older policy being deleted leaves its target to the next oldest, as in Kuadrant', () => {
  assert.equal(servedBy([policy('old', '2026-01-01T00:00:00Z', undefined, {}, { deletionTimestamp: '2026-01-03T00:00:00Z' }), policy('new', '2026-01-02T00:00:00Z')]).by, ['new:a', 'new:b']);
});

test('excludeAddresses: an entry removes the Gateway address whose value is the same text, as Kuadrant compares them; another case or a trailing dot does not', () => {
  const addresses = [address(hostname('lb.example.org')), address(hostname('other.example.org')), address(ip('2001:db8::1'), '2001:DB8::1')];
  const { targets } = servedBy([policy('p', '2026-01-01T00:00:00Z', 'a', { excludeAddresses: ['LB.Example.org.', 'other.example.org', '2001:DB8::1'] })], addresses);
  assert.equal(targets, ['lb.example.org']);
});

test('excludeAddresses: a CIDR removes the IP addresses in it, whatever their written form', () => {
  const addresses = [address(ip('2001:db8::1'), '2001:DB8:0::1'), address(ip('10.0.0.1'))];
  const { targets } = servedBy([policy('p', '2026-01-01T00:00:00Z', 'a', { excludeAddresses: ['2001:db8::/64'] })], addresses);
  assert.equal(targets, ['10.0.0.1']);
});

test('excludeAddresses: an IPv6 CIDR never removes an IPv4 address, as Go\'s IPNet.Contains (Kuadrant\'s) never matches one', () => {
  const addresses = [address(ip('10.0.0.1')), address(ip('2001:db8::1'))];
  assert.equal(servedBy([policy('p', '2026-01-01T00:00:00Z', 'a', { excludeAddresses: ['::/0'] })], addresses).targets, ['10.0.0.1']);
  assert.equal(servedBy([policy('p', '2026-01-01T00:00:00Z', 'a', { excludeAddresses: ['::/64'] })], addresses).targets, ['10.0.0.1', '2001:db8::1']);
});

test("excludeAddresses: an IPv4-mapped CIDR removes the IPv4 addresses in its last 32 bits' prefix and no IPv6 address, as Go's IPNet.Contains reads it", () => {
  const addresses = [address(ip('10.0.0.5')), address(ip('11.1.0.5')), address(ip('2001:db8::1'))];
  assert.equal(servedBy([policy('p', '2026-01-01T00:00:00Z', 'a', { excludeAddresses: ['::ffff:10.0.0.0/104'] })], addresses).targets, ['11.1.0.5', '2001:db8::1']);
});

test("excludeAddresses: an IPv4-mapped CIDR of fewer than 96 bits is an IPv6 network, as Go's IPNet.Contains reads it: IPv4 addresses stay", () => {
  const addresses = [address(ip('10.0.0.5')), address(ip('::1')), address(ip('2001:db8::1'))];
  assert.equal(servedBy([policy('p', '2026-01-01T00:00:00Z', 'a', { excludeAddresses: ['::ffff:0.0.0.0/64'] })], addresses).targets, ['10.0.0.5', '2001:db8::1']);
  assert.equal(servedBy([policy('p', '2026-01-01T00:00:00Z', 'a', { excludeAddresses: ['::ffff:10.0.0.0/90'] })], addresses).targets, ['10.0.0.5', '::1', '2001:db8::1']);
});

test('excludeAddresses: a prefix with leading zeros parses, as Go parses it', () => {
  const addresses = [address(ip('10.0.0.5')), address(ip('11.1.0.5'))];
  assert.equal(servedBy([policy('p', '2026-01-01T00:00:00Z', 'a', { excludeAddresses: ['10.0.0.0/0008'] })], addresses).targets, ['11.1.0.5']);
});

test('a load-balanced host whose derived names would pass 253 characters is not served, and the warning says why', () => {
  const host = `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(45)}.example.com`;
  const warnings: string[] = [];
  const owners = dnsPolicyEndpoints(
    {
      policies: [policy('p', '2026-01-01T00:00:00Z', undefined, { loadBalancing: { weight: 10, geo: 'EU', defaultGeo: true } })],
      gateways: [{ id: { namespace: 'ns', name: 'gw', created: 'x' }, listeners: [{ name: 'long', hostname: host, attachedRoutes: 1 }, { name: 'short', hostname: 'b.example.com', attachedRoutes: 1 }], addresses: [address(ip('10.0.0.1'))] }],
      zones: ['example.com'],
      kuadrantHosts: new Set(),
      clusterId: ID,
      ttls: { ttl: 60, loadBalancedTtl: 300 },
    },
    (msg) => warnings.push(msg),
  );
  assert.ok(host.length <= 253);
  assert.equal(owners.map((o) => o.source), ['dnspolicy/ns/p:gateway/gw/short']);
  assert.match(warnings.join('\n'), /more than DNS allows \(253, and 63 a label\); its host a{60}\.b{60}\.c{60}\.d{45}\.example\.com is not served/);
});

test('a Gateway address of a type other than IPAddress (NamedAddress) is a host name, as Kuadrant takes it: a CNAME target', () => {
  const inputs = new GatewayInputs([ZONE], { warn: () => undefined, flush: () => undefined });
  inputs.set('cluster-id', [KUBE_SYSTEM]);
  inputs.set('gateways', [gateway('gw', [{ name: 'http', hostname: `app.${ZONE}` }], [{ type: 'NamedAddress', value: 'lb.example.org' }])]);
  inputs.set('dnspolicies', [dnsPolicy('dns', { gateway: 'gw' })]);
  const endpoints = (inputs.contribution().gatewayOwners ?? []).flatMap((o) => o.endpoints);
  assert.equal(endpoints.map((x) => `${x.dnsName} ${x.recordType} ${x.targets.join(',')}`), [`app.${ZONE} CNAME lb.example.org`]);
});

test("a Gateway being deleted is served until it is gone, as Kuadrant's reconciler builds its records while it is listed", () => {
  const inputs = new GatewayInputs([ZONE], { warn: () => undefined, flush: () => undefined });
  inputs.set('cluster-id', [KUBE_SYSTEM]);
  const deleting = gateway('gw', [{ name: 'http', hostname: `app.${ZONE}` }], [{ value: '192.0.2.10' }]) as Gateway;
  inputs.set('gateways', [{ ...deleting, metadata: { ...deleting.metadata, deletionTimestamp: '2026-02-01T00:00:00Z' } }]);
  inputs.set('dnspolicies', [dnsPolicy('dns', { gateway: 'gw' })]);
  const endpoints = (inputs.contribution().gatewayOwners ?? []).flatMap((o) => o.endpoints);
  assert.equal(endpoints.map((x) => `${x.dnsName} ${x.recordType} ${x.targets.join(',')}`), [`app.${ZONE} A 192.0.2.10`]);
});

test("a load-balanced policy whose geo is named default, with defaultGeo, is not applied, with a warning: Kuadrant's default geo set has that name", () => {
  const warnings: string[] = [];
  const inputs = new GatewayInputs([ZONE], { warn: (msg: string) => void warnings.push(msg), flush: () => undefined });
  inputs.set('cluster-id', [KUBE_SYSTEM]);
  inputs.set('gateways', [gateway('gw', [{ name: 'http', hostname: `app.${ZONE}` }], [{ value: '192.0.2.10' }])]);
  inputs.set('dnspolicies', [dnsPolicy('dns', { gateway: 'gw' }, { loadBalancing: { weight: 100, geo: 'default', defaultGeo: true } })]);
  assert.equal(inputs.contribution().gatewayOwners ?? [], []);
  assert.match(warnings.join('\n'), /spec\.loadBalancing\.geo: "default" is the name of the default geo's record set.*policy not applied/);
});

test('what the monitor keeps of a Gateway gives the view the whole object gives, without its status conditions and supported kinds', () => {
  const whole = gateway('gw', [{ name: 'http', hostname: `app.${ZONE}` }, { name: 'any' }], [{ value: '192.0.2.1' }, { type: 'Hostname', value: 'lb.example.org' }]) as Gateway;
  const kept = gatewayProjection(whole);
  assert.equal(gatewayView(kept, () => undefined), gatewayView(whole, () => undefined));
  assert.not.match(JSON.stringify(kept), /conditions|supportedKinds|gatewayClassName/);
  assert.match(JSON.stringify(whole), /conditions/);
});

test.run();
