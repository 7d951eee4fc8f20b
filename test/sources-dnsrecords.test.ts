import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dnsRecordPolicyLog, dnsRecordsContribution, type DNSRecord } from '../lib/sources/dnsrecords.js';
import { KubeConfig } from '@kubernetes/client-node';
import { startClusterSources } from '../lib/sources/cluster-sources.js';
import { createLogger } from '../lib/runtime/log.js';
import { LB_NAMES } from '../lib/model.js';
import { dnsRecord as fixtureDnsRecord, ROUTER, startFakeCluster } from './support/cluster-fixture.js';

function collector() {
  const warnings: { msg: string; fields: Record<string, unknown> }[] = [];
  const warn = (msg: string, fields: Record<string, unknown>): void => {
    warnings.push({ msg, fields });
  };
  return { warnings, warn, messages: () => warnings.map((w) => w.msg) };
}

const NS = 'openshift-ingress-operator';
const DOMAIN = 'c1.example.com';

function record(name: string, spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): DNSRecord {
  return { metadata: { namespace: NS, name, ...metadata }, spec: { dnsManagementPolicy: 'Managed', ...spec } };
}

const wildcardA = (targets: unknown[]) => record('default-wildcard', { dnsName: '*.apps.c1.example.com.', recordType: 'A', targets });
const ip = (ip: string) => ({ kind: 'ip', ip });

test('a Managed A record is served under its name, lower case without the trailing dot', () => {
  const { warn, warnings } = collector();
  const c = dnsRecordsContribution([record('default-wildcard', { dnsName: '*.Apps.C1.example.com.', recordType: 'A', targets: ['203.0.113.7', '203.0.113.8'] })], warn, DOMAIN);
  assert.equal(c, {
    extraRecords: [{ name: '*.apps.c1.example.com', targets: [ip('203.0.113.7'), ip('203.0.113.8')], source: `dnsrecord/${NS}/default-wildcard` }],
    unmanaged: [],
  });
  assert.equal(warnings, []);
});

test('a CNAME record (AWS) is served through its target host name', () => {
  const { warn, warnings } = collector();
  const c = dnsRecordsContribution([record('default-wildcard', { dnsName: '*.apps.c1.example.com.', recordType: 'CNAME', targets: ['a1b2.elb.us-east-1.amazonaws.com'] })], warn, DOMAIN);
  assert.equal(c.extraRecords?.[0]?.targets, [{ kind: 'hostname', hostname: 'a1b2.elb.us-east-1.amazonaws.com' }]);
  assert.equal(warnings, []);
});

test('a record without dnsManagementPolicy is Managed, the CRD default', () => {
  const { warn } = collector();
  const r: DNSRecord = { metadata: { namespace: NS, name: 'r' }, spec: { dnsName: 'x.c1.example.com', recordType: 'A', targets: ['10.0.0.1'] } };
  assert.equal(dnsRecordsContribution([r], warn, DOMAIN).extraRecords?.map((e) => e.name), ['x.c1.example.com']);
});

test('an Unmanaged record is reported, not served, without a warning', () => {
  const { warn, warnings } = collector();
  const c = dnsRecordsContribution([record('default-wildcard', { dnsName: '*.apps.c1.example.com.', recordType: 'A', targets: ['203.0.113.7'], dnsManagementPolicy: 'Unmanaged' })], warn, DOMAIN);
  assert.equal(c, { extraRecords: [], unmanaged: [{ name: '*.apps.c1.example.com', source: `dnsrecord/${NS}/default-wildcard`, targets: [ip('203.0.113.7')] }] });
  assert.equal(warnings, []);
});

test('an unknown dnsManagementPolicy is not served, with a warning', () => {
  const { warn, messages } = collector();
  const c = dnsRecordsContribution([record('r', { dnsName: 'x.c1.example.com', recordType: 'A', targets: ['10.0.0.1'], dnsManagementPolicy: 'Sometimes' })], warn, DOMAIN);
  assert.equal(c, { extraRecords: [], unmanaged: [] });
  assert.match(messages()[0] ?? '', /^dnsrecord openshift-ingress-operator\/r spec\.dnsManagementPolicy: "Sometimes"/);
});

test('a record being deleted is not served, without a warning', () => {
  const { warn, warnings } = collector();
  const r = record('default-wildcard', { dnsName: '*.apps.c1.example.com.', recordType: 'A', targets: ['203.0.113.7'] }, { deletionTimestamp: '2025-01-01T00:00:00Z' });
  assert.equal(dnsRecordsContribution([r], warn, DOMAIN), { extraRecords: [], unmanaged: [] });
  assert.equal(warnings, []);
});

test('a wildcard anywhere but the leftmost label is refused with a warning naming spec.dnsName', () => {
  const { warn, messages } = collector();
  const c = dnsRecordsContribution([record('r', { dnsName: 'apps.*.c1.example.com.', recordType: 'A', targets: ['10.0.0.1'] })], warn, DOMAIN);
  assert.equal(c.extraRecords, []);
  assert.ok(messages()[0]?.startsWith(`dnsrecord ${NS}/r spec.dnsName: "apps.*.c1.example.com."`), messages()[0]);
});

test('a name outside the cluster domain is refused with a warning naming the record and the domain', () => {
  const { warn, messages } = collector();
  const c = dnsRecordsContribution([record('r', { dnsName: 'www.google.com.', recordType: 'A', targets: ['10.0.0.1'] })], warn, DOMAIN);
  assert.equal(c.extraRecords, []);
  assert.equal(messages(), [`dnsrecord ${NS}/r spec.dnsName: "www.google.com." is outside the cluster domain ${DOMAIN}; record not served`]);
});

test('a wildcard over a whole top-level domain (*.com) is refused with a warning', () => {
  const { warn, messages } = collector();
  const c = dnsRecordsContribution([record('r', { dnsName: '*.com.', recordType: 'A', targets: ['10.0.0.1'] })], warn, DOMAIN);
  assert.equal(c.extraRecords, []);
  assert.match(messages()[0] ?? '', `dnsrecord ${NS}/r spec.dnsName: "*.com." needs at least 2 labels after the *`);
});

test('an Unmanaged wildcard over a whole top-level domain (*.org) is not given to the admin', () => {
  const { warn, messages } = collector();
  const c = dnsRecordsContribution([record('r', { dnsName: '*.org.', recordType: 'A', targets: ['10.0.0.1'], dnsManagementPolicy: 'Unmanaged' })], warn, DOMAIN);
  assert.equal(c.unmanaged, []);
  assert.match(messages()[0] ?? '', 'needs at least 2 labels after the *');
});

test('a name that only ends in the same letters as the domain is outside it', () => {
  const { warn, messages } = collector();
  const c = dnsRecordsContribution([record('r', { dnsName: `x${DOMAIN}`, recordType: 'A', targets: ['10.0.0.1'] })], warn, DOMAIN);
  assert.equal(c.extraRecords, []);
  assert.match(messages()[0] ?? '', 'is outside the cluster domain');
});

for (const api of ['api-int', 'api']) {
  test(`${api}.<domain> is refused with a warning: only the API LBs answer for it`, () => {
    const { warn, messages } = collector();
    const c = dnsRecordsContribution([record('r', { dnsName: `${api}.${DOMAIN}.`, recordType: 'A', targets: ['10.0.0.1'] })], warn, DOMAIN);
    assert.equal(c.extraRecords, []);
    assert.match(messages()[0] ?? '', `dnsrecord ${NS}/r spec.dnsName: "${api}.${DOMAIN}." is one of the cluster's API names`);
  });
}

test('a wildcard for the whole domain is refused with a warning: it would cover the API names', () => {
  const { warn, messages } = collector();
  const c = dnsRecordsContribution([record('r', { dnsName: `*.${DOMAIN}.`, recordType: 'A', targets: ['10.0.0.1'] })], warn, DOMAIN);
  assert.equal(c.extraRecords, []);
  assert.match(messages()[0] ?? '', `"*.${DOMAIN}." is a wildcard covering the cluster's API names`);
});

test("the cluster domain's apex is refused with a warning: its SOA and NS are the domain's DNS's", () => {
  const { warn, messages } = collector();
  const c = dnsRecordsContribution([record('r', { dnsName: `${DOMAIN}.`, recordType: 'A', targets: ['10.0.0.1'] })], warn, DOMAIN);
  assert.equal(c.extraRecords, []);
  assert.match(messages()[0] ?? '', `"${DOMAIN}." is the cluster domain itself`);
});

test("an Unmanaged record for an API name is not reported to the admin, with a warning: print-records would redirect the API", () => {
  const { warn, messages } = collector();
  const c = dnsRecordsContribution([record('r', { dnsName: `api.${DOMAIN}.`, recordType: 'A', targets: ['203.0.113.9'], dnsManagementPolicy: 'Unmanaged' })], warn, DOMAIN);
  assert.equal(c.unmanaged, []);
  assert.match(messages()[0] ?? '', `"api.${DOMAIN}." is one of the cluster's API names`);
});

test('an Unmanaged record for a parent of the cluster domain, or a wildcard over it, is not reported to the admin: its update would delete the parent zone\'s own records', () => {
  const { warn, messages } = collector();
  const parent = DOMAIN.slice(DOMAIN.indexOf('.') + 1);
  const c = dnsRecordsContribution(
    [record('a', { dnsName: `${parent}.`, recordType: 'CNAME', targets: ['lb.example.net'], dnsManagementPolicy: 'Unmanaged' }), record('b', { dnsName: `*.${parent}.`, recordType: 'A', targets: ['203.0.113.9'], dnsManagementPolicy: 'Unmanaged' })],
    warn,
    DOMAIN,
  );
  assert.equal(c.unmanaged, []);
  assert.match(messages()[0] ?? '', `"${parent}." is a parent of the cluster domain ${DOMAIN}`);
  assert.match(messages()[1] ?? '', `"*.${parent}." is a wildcard over the cluster domain ${DOMAIN}`);
});

test('names under the cluster domain, wildcard or not, are served without a warning', () => {
  const { warn, warnings } = collector();
  const c = dnsRecordsContribution(
    [
      record('a', { dnsName: `*.apps2.${DOMAIN}.`, recordType: 'A', targets: ['10.0.2.40'] }),
      record('b', { dnsName: `console.${DOMAIN}.`, recordType: 'A', targets: ['10.0.2.41'] }),
      record('c', { dnsName: `x.api.${DOMAIN}.`, recordType: 'A', targets: ['10.0.2.42'] }),
    ],
    warn,
    DOMAIN,
  );
  assert.equal(c.extraRecords?.map((e) => e.name), [`*.apps2.${DOMAIN}`, `console.${DOMAIN}`, `x.api.${DOMAIN}`]);
  assert.equal(warnings, []);
});

for (const bad of ['a{b.example.com', 'x"y.example.com', 'a b.example.com', '{{ .Name }}', 'a.example.com\nb.example.com']) {
  test(`a dnsName carrying Corefile syntax (${JSON.stringify(bad)}) is refused with a warning`, () => {
    const { warn, messages } = collector();
    const c = dnsRecordsContribution([record('r', { dnsName: bad, recordType: 'A', targets: ['10.0.0.1'] })], warn, DOMAIN);
    assert.equal(c.extraRecords, []);
    assert.is(messages().length, 1);
    assert.ok(messages()[0]?.startsWith(`dnsrecord ${NS}/r spec.dnsName`), messages()[0]);
  });
}

test('a record whose object name could break the Corefile comment it ends up in is refused', () => {
  const { warn, messages } = collector();
  const c = dnsRecordsContribution([record('x\n}', { dnsName: 'x.c1.example.com', recordType: 'A', targets: ['10.0.0.1'] })], warn, DOMAIN);
  assert.equal(c.extraRecords, []);
  assert.match(messages()[0] ?? '', /metadata: .*is not a valid namespace and name/);
});

test('an IPv6 target in an A record is skipped with a warning, the other targets kept', () => {
  const { warn, messages } = collector();
  const c = dnsRecordsContribution([wildcardA(['fd00::7', '203.0.113.7'])], warn, DOMAIN);
  assert.equal(c.extraRecords?.[0]?.targets, [ip('203.0.113.7')]);
  assert.ok(messages()[0]?.startsWith(`dnsrecord ${NS}/default-wildcard spec.targets[0]: "fd00::7" is an IPv6 address in an A record`), messages()[0]);
});

test('a host name target in an A record is skipped with a warning', () => {
  const { warn, messages } = collector();
  const c = dnsRecordsContribution([wildcardA(['lb.example.com', '203.0.113.7'])], warn, DOMAIN);
  assert.equal(c.extraRecords?.[0]?.targets, [ip('203.0.113.7')]);
  assert.match(messages()[0] ?? '', /host name in an A record/);
});

test('an IP target in a CNAME record is skipped with a warning', () => {
  const { warn, messages } = collector();
  const c = dnsRecordsContribution([record('r', { dnsName: 'x.c1.example.com', recordType: 'CNAME', targets: ['203.0.113.7', 'lb.example.com'] })], warn, DOMAIN);
  assert.equal(c.extraRecords?.[0]?.targets, [{ kind: 'hostname', hostname: 'lb.example.com' }]);
  assert.match(messages()[0] ?? '', /spec\.targets\[0\].*IP address in a CNAME record/);
});

test('a recordType outside the CRD enum (AAAA) is not served, with a warning', () => {
  const { warn, messages } = collector();
  const c = dnsRecordsContribution([record('r', { dnsName: 'x.c1.example.com', recordType: 'AAAA', targets: ['fd00::1'] })], warn, DOMAIN);
  assert.equal(c.extraRecords, []);
  assert.match(messages()[0] ?? '', /spec\.recordType: "AAAA" is not A or CNAME/);
});

test('malformed and empty targets are skipped with a warning each', () => {
  const { warn, messages } = collector();
  const c = dnsRecordsContribution([wildcardA(['010.0.0.1', '10.0.0.256', 'fe80::1%eth0', '', '10.0.0.9'])], warn, DOMAIN);
  assert.equal(c.extraRecords?.[0]?.targets, [ip('10.0.0.9')]);
  assert.equal(messages().map((m) => m.split(':')[0]), [0, 1, 2, 3].map((i) => `dnsrecord ${NS}/default-wildcard spec.targets[${i}]`));
});

test('a record with no valid target is not served, with a warning', () => {
  const { warn, messages } = collector();
  const c = dnsRecordsContribution([wildcardA(['10.0.0.1 }']), wildcardA([])], warn, DOMAIN);
  assert.equal(c.extraRecords, []);
  assert.is(messages().length, 3);
  assert.match(messages()[1] ?? '', /spec\.targets: .*no usable target; record not served/);
  assert.match(messages()[2] ?? '', /spec\.targets: .*no usable target; record not served/);
});

test('duplicate targets within a record are kept once with a warning', () => {
  const { warn, messages } = collector();
  const c = dnsRecordsContribution([wildcardA(['10.0.0.1', '10.0.0.1'])], warn, DOMAIN);
  assert.equal(c.extraRecords?.[0]?.targets, [ip('10.0.0.1')]);
  assert.match(messages()[0] ?? '', /spec\.targets\[1\]: "10\.0\.0\.1" repeats/);
});

test('records naming the same DNS name are merged: targets combined, both sources named', () => {
  const { warn } = collector();
  const c = dnsRecordsContribution(
    [
      record('a', { dnsName: 'x.c1.example.com.', recordType: 'A', targets: ['10.0.0.1', '10.0.0.2'] }),
      record('b', { dnsName: 'X.c1.example.com', recordType: 'A', targets: ['10.0.0.2', '10.0.0.3'] }),
    ],
    warn,
    DOMAIN,
  );
  assert.equal(c.extraRecords, [
    { name: 'x.c1.example.com', targets: [ip('10.0.0.1'), ip('10.0.0.2'), ip('10.0.0.3')], source: `dnsrecord/${NS}/a, dnsrecord/${NS}/b` },
  ]);
});

test('more than 16 targets for one name are capped at 16 with a warning', () => {
  const { warn, messages } = collector();
  const many = (from: number) => Array.from({ length: 10 }, (_, i) => `10.0.3.${from + i}`);
  const c = dnsRecordsContribution(
    [record('a', { dnsName: 'x.c1.example.com', recordType: 'A', targets: many(1) }), record('b', { dnsName: 'x.c1.example.com', recordType: 'A', targets: many(11) })],
    warn,
    DOMAIN,
  );
  assert.is(c.extraRecords?.[0]?.targets.length, 16);
  assert.is(messages().length, 1);
  assert.match(messages()[0] ?? '', /20 distinct entries exceed the limit of 16/);
});

test('extra records come out sorted by name', () => {
  const { warn } = collector();
  const c = dnsRecordsContribution(
    [record('b', { dnsName: 'z.c1.example.com', recordType: 'A', targets: ['10.0.0.1'] }), record('a', { dnsName: 'a.c1.example.com', recordType: 'A', targets: ['10.0.0.1'] })],
    warn,
    DOMAIN,
  );
  assert.equal(c.extraRecords?.map((e) => e.name), ['a.c1.example.com', 'z.c1.example.com']);
});

test('a Managed record is served at its recordTTL', () => {
  const { warn, warnings } = collector();
  const c = dnsRecordsContribution([record('apps2', { dnsName: '*.apps2.c1.example.com', recordType: 'A', targets: ['203.0.113.7'], recordTTL: 120 })], warn, DOMAIN);
  assert.is(c.extraRecords?.[0]?.ttl, 120);
  assert.equal(warnings, []);
});

test('recordTTL 0 means 30 s, as the ingress operator reads it', () => {
  const { warn } = collector();
  const c = dnsRecordsContribution([record('r', { dnsName: 'x.c1.example.com', recordType: 'A', targets: ['10.0.0.1'], recordTTL: 0 })], warn, DOMAIN);
  assert.is(c.extraRecords?.[0]?.ttl, 30);
});

test('records sharing a name are served at the shortest of their recordTTLs', () => {
  const { warn } = collector();
  const c = dnsRecordsContribution(
    [record('a', { dnsName: 'x.c1.example.com', recordType: 'A', targets: ['10.0.0.1'], recordTTL: 300 }), record('b', { dnsName: 'x.c1.example.com', recordType: 'A', targets: ['10.0.0.2'], recordTTL: 60 })],
    warn,
    DOMAIN,
  );
  assert.is(c.extraRecords?.[0]?.ttl, 60);
});

test('an unusable recordTTL is warned about and the record served at the cluster TTL', () => {
  const { warn, warnings } = collector();
  const c = dnsRecordsContribution([record('r', { dnsName: 'x.c1.example.com', recordType: 'A', targets: ['10.0.0.1'], recordTTL: 100000 })], warn, DOMAIN);
  assert.is(c.extraRecords?.[0]?.ttl, undefined);
  assert.match(warnings.map((w) => w.msg).join('\n'), /spec\.recordTTL: 100000 is more than 65535 s/);
});

test('an Unmanaged record carries what the admin must create: targets and recordTTL', () => {
  const { warn } = collector();
  const c = dnsRecordsContribution([record('apps2', { dnsName: '*.apps2.c1.example.com', recordType: 'CNAME', targets: ['lb2.elb.example.net'], recordTTL: 45, dnsManagementPolicy: 'Unmanaged' })], warn, DOMAIN);
  assert.equal(c.unmanaged, [{ name: '*.apps2.c1.example.com', source: `dnsrecord/${NS}/apps2`, targets: [{ kind: 'hostname', hostname: 'lb2.elb.example.net' }], ttl: 45 }]);
});

test('each DNSRecord policy is logged once, and again only when it changes', () => {
  const lines: Record<string, unknown>[] = [];
  const report = dnsRecordPolicyLog((msg, fields) => lines.push({ msg, ...fields }), 60);
  const managed = record('a', { dnsName: 'x.c1.example.com', recordType: 'A', targets: ['10.0.0.1'] });
  const { warn } = collector();
  report(dnsRecordsContribution([managed], warn, DOMAIN));
  report(dnsRecordsContribution([managed], warn, DOMAIN));
  assert.equal(lines, [{ msg: 'DNSRecord policy', dnsRecord: `dnsrecord/${NS}/a`, name: 'x.c1.example.com', policy: 'Managed', action: 'served by this CoreDNS', ttl: 60 }]);
  report(dnsRecordsContribution([{ ...managed, spec: { ...managed.spec, dnsManagementPolicy: 'Unmanaged' } }], warn, DOMAIN));
  assert.is(lines.length, 2);
  assert.match(String(lines[1]?.action), /not served: the admin's DNS must hold it/);
});


test('the sources name themselves before any starts: a refusal found by the first list comes after, so its counter can be exported from 0 first', async () => {
  const cluster = await startFakeCluster();
  cluster.server.create(fixtureDnsRecord('outside', { dnsName: 'www.example.org.', targets: ['10.0.0.1'] }));
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  const order: string[] = [];
  const sources = await startClusterSources({
    kc,
    role: 'control-plane',
    domain: DOMAIN,
    ttl: 60,
    purpose: 'corefile',
    wanted: new Set(LB_NAMES),
    ingressService: ROUTER,
    lbConfig: undefined,
    localSays: { lbs: new Set(), nodes: false },
    log: createLogger({ write: () => true }),
    onChange: () => undefined,
    onStarting: (names) => order.push(`starting ${names.some((n) => n.startsWith('dnsrecords in ')) ? 'with dnsrecords' : 'without dnsrecords'}`),
    onWarning: (w) => order.push(`warning from ${w.source.split(' ')[0]}`),
  });
  try {
    assert.equal(order.slice(0, 2), ['starting with dnsrecords', 'warning from dnsrecords']);
  } finally {
    await sources.stop();
    await cluster.close();
  }
});

test.run();
