/** DNSRecords and nodes in one CoreDNS: a node keeps its name, whatever a DNSRecord asks. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ClusterSpec, Endpoint, ExtraRecord } from '../lib/model.js';
import { buildRecordSet } from '../lib/resolve/record-set.js';

const D = 'c1.example.com';
const ip = (value: string): Endpoint => ({ kind: 'ip', ip: value });
const record = (name: string, source: string): ExtraRecord => ({ name, targets: [ip('10.0.9.9')], source });

function spec(nodes: readonly string[], extraRecords: readonly ExtraRecord[], over: Partial<ClusterSpec> = {}): ClusterSpec {
  return {
    domain: D,
    role: 'control-plane',
    lbs: { api: [ip('10.0.0.10')], 'api-int': [ip('10.0.0.20')], ingress: [ip('10.0.1.30')] },
    extraRecords,
    nodes: nodes.map((name) => ({ name, ips: ['10.0.0.5'] })),
    upstreams: ['10.0.0.2'],
    ttl: 60,
    reload: { intervalSeconds: 2, jitterSeconds: 1 },
    ...over,
  };
}

const servedNames = (s: ClusterSpec) => buildRecordSet(s, new Map()).recordSet.names.map((n) => n.name);
const notes = (s: ClusterSpec) => buildRecordSet(s, new Map()).notes;

test("a wildcard DNSRecord whose apex is a node's name is not served: its block would answer the node's name empty", () => {
  const s = spec(['foo'], [record(`*.foo.${D}`, 'dnsrecord/a/wild')]);
  assert.not.ok(servedNames(s).includes(`*.foo.${D}`));
  assert.ok(notes(s).some((n) => n.name === `*.foo.${D}` && n.note.includes('node foo')));
});

test("a DNSRecord naming a node, by its short name's FQDN or its dotted name, is not served, and a note says whose name it is", () => {
  const s = spec(['master-0', `w1.${D}`], [record(`master-0.${D}`, 'dnsrecord/a/short'), record(`w1.${D}`, 'dnsrecord/a/full')]);
  assert.not.ok(servedNames(s).some((n) => n.startsWith('master-0.') || n.startsWith('w1.')));
  assert.equal(notes(s), [
    { name: `master-0.${D}`, note: "not served for dnsrecord/a/short: it is the name of node master-0, which its hosts entry answers" },
    { name: `w1.${D}`, note: `not served for dnsrecord/a/full: it is the name of node w1.${D}, which its hosts entry answers` },
  ]);
});

test('a wildcard DNSRecord over a node is not served; one beside the nodes, or a name under a node, is', () => {
  const s = spec(['w0.rack1'], [record(`*.rack1.${D}`, 'dnsrecord/a/over'), record(`*.rack2.${D}`, 'dnsrecord/a/beside'), record(`x.w0.rack1.${D}`, 'dnsrecord/a/under')]);
  const names = servedNames(s);
  assert.not.ok(names.includes(`*.rack1.${D}`));
  assert.ok(names.includes(`*.rack2.${D}`) && names.includes(`x.w0.rack1.${D}`), names.join(' '));
  assert.equal(notes(s).map((n) => n.note), ['not served for dnsrecord/a/over: it covers the name of node w0.rack1, which its hosts entry answers']);
});

test('a node named as the domain itself is covered by no wildcard under the domain', () => {
  const s = spec([D], [record(`*.com.${D}`, 'dnsrecord/a/com')]);
  assert.ok(servedNames(s).includes(`*.com.${D}`));
  assert.equal(notes(s), []);
});

test('with the nodes left to other DNS servers, a DNSRecord over a node is served: this CoreDNS has no entry for it to hide', () => {
  const s = spec(['w0.rack1'], [record(`*.rack1.${D}`, 'dnsrecord/a/over')], { withheld: { nodes: 'dnsRecordsType External' } });
  assert.ok(servedNames(s).includes(`*.rack1.${D}`));
  assert.equal(notes(s), []);
});

test.run();
