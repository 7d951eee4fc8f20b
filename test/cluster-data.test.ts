/** One truth per LB: the sources that name an LB are served; a published copy only for an LB nothing else names. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { applyClusterData, lbDisagreements, mergeContributions } from '../lib/sources/cluster-data.js';
import type { ClusterSpec, Endpoint, ExtraRecord } from '../lib/model.js';

const ip = (ip: string): Endpoint => ({ kind: 'ip', ip });
const host = (hostname: string): Endpoint => ({ kind: 'hostname', hostname });
const NOTHING_LOCAL = { lbs: new Set<never>(), nodes: false };

test('an LB a source names is served from that source alone, the published copy kept aside', () => {
  const data = mergeContributions([{ lbs: { 'api-int': [host('int.elb.example.net')] } }, { publishedLbs: { 'api-int': [ip('10.9.9.9')] } }]);
  assert.equal(data.lbs['api-int'], [host('int.elb.example.net')]);
  assert.equal(data.shadowed?.['api-int'], [ip('10.9.9.9')]);
});

test('an LB no source names is served from the published copy', () => {
  const data = mergeContributions([{ lbs: { ingress: [ip('10.0.1.30')] } }, { publishedLbs: { 'api-int': [ip('10.9.9.9')], api: [] } }]);
  assert.equal(data.lbs['api-int'], [ip('10.9.9.9')]);
  assert.equal(data.shadowed, {});
  assert.equal(data.publishedOnly, ['api-int']);
});

test('a published copy that differs from the served addresses is a disagreement; the same set in another order is not', () => {
  const data = mergeContributions([{ lbs: { 'api-int': [host('int.elb.example.net')] } }, { publishedLbs: { 'api-int': [ip('10.0.0.2'), ip('10.0.0.1')] } }]);
  assert.equal(lbDisagreements(data, NOTHING_LOCAL, () => ['10.0.0.1', '10.0.0.2']), []);
  assert.equal(lbDisagreements(data, NOTHING_LOCAL, () => ['10.0.0.1', '10.0.0.3']), [{ lb: 'api-int', served: ['10.0.0.1', '10.0.0.3'], published: ['10.0.0.1', '10.0.0.2'] }]);
});

test('while the served addresses are unknown (a host name not yet resolved) nothing is called a disagreement', () => {
  const data = mergeContributions([{ lbs: { 'api-int': [host('int.elb.example.net')] } }, { publishedLbs: { 'api-int': [ip('10.0.0.1')] } }]);
  assert.equal(lbDisagreements(data, NOTHING_LOCAL, () => []), []);
});

test('an LB a flag gives is compared with the published copy too', () => {
  const data = mergeContributions([{ publishedLbs: { api: [ip('10.0.0.1')] } }]);
  assert.equal(lbDisagreements(data, { lbs: new Set(['api'] as const), nodes: false }, () => ['10.0.0.7']), [{ lb: 'api', served: ['10.0.0.7'], published: ['10.0.0.1'] }]);
});

const D = 'c1.example.com';
const LOCAL: ClusterSpec = {
  domain: D,
  role: 'control-plane',
  lbs: { api: [], 'api-int': [], ingress: [] },
  extraRecords: [],
  nodes: [],
  upstreams: ['10.0.0.2'],
  ttl: 60,
  reload: { intervalSeconds: 2, jitterSeconds: 1 },
};
const dnsRecord = (name: string, source: string): ExtraRecord => ({ name, targets: [ip('10.0.9.9')], source });
const withNodesAndRecords = (nodes: readonly string[], records: readonly ExtraRecord[]): ClusterSpec =>
  applyClusterData(LOCAL, mergeContributions([{ nodes: nodes.map((name) => ({ name, ips: ['10.0.0.5'] })), extraRecords: records }]), NOTHING_LOCAL);

test("a DNSRecord naming a node's name is left out and said, the node keeping its name", () => {
  const spec = withNodesAndRecords(['master-0', 'w1.corp.example.net'], [dnsRecord(`master-0.${D}`, 'dnsrecord/a/short'), dnsRecord(`w1.corp.example.net.${D}`, 'dnsrecord/a/dotted')]);
  assert.equal(spec.extraRecords, []);
  assert.equal(spec.metNodes, [
    { name: `master-0.${D}`, source: 'dnsrecord/a/short', node: 'master-0' },
    { name: `w1.corp.example.net.${D}`, source: 'dnsrecord/a/dotted', node: 'w1.corp.example.net' },
  ]);
});

test('a wildcard DNSRecord over a node is left out; one beside the nodes, or a name under a node, is kept', () => {
  const spec = withNodesAndRecords(['w0.rack1'], [dnsRecord(`*.rack1.${D}`, 'dnsrecord/a/over'), dnsRecord(`*.rack2.${D}`, 'dnsrecord/a/beside'), dnsRecord(`x.w0.rack1.${D}`, 'dnsrecord/a/under')]);
  assert.equal(spec.extraRecords.map((r) => r.source), ['dnsrecord/a/beside', 'dnsrecord/a/under']);
  assert.equal(spec.metNodes, [{ name: `*.rack1.${D}`, source: 'dnsrecord/a/over', node: 'w0.rack1' }]);
});

test.run();
