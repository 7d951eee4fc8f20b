/**
 * Names that answer alike share a pair of template blocks: the rendered Corefile stays small at
 * thousands of Gateway hosts, and the CoreDNS emulator still answers every name as before.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { renderCorefile } from '../lib/render/corefile.js';
import { builtinTemplate } from '../lib/render/templates.js';
import { templateBlocks } from '../lib/render/template-blocks.js';
import { buildRecordSet } from '../lib/resolve/record-set.js';
import { GatewayInputs } from '../lib/sources/gateway-sources.js';
import { specFromConfig } from '../lib/inputs/spec.js';
import { EXAMPLE_CONFIG } from '../lib/inputs/example.js';
import { leafLabel } from '../lib/sources/gateway-endpoints.js';
import type { NameRecord } from '../lib/model.js';
import type { KubeObject } from './support/kube-api-server.js';
import { startCorefileServer } from './support/corefile-server.js';
import { ask, dnsPolicy, gateway, NS, ZONE } from './support/gateway-fixture.js';

const simple = dnsPolicy('simple', { gateway: 'simple' });
const balanced = dnsPolicy('balanced', { gateway: 'balanced' }, { loadBalancing: { weight: 100, geo: 'GEO-EU', defaultGeo: true } });

function listeners(prefix: string, count: number): { name: string; hostname: string }[] {
  return Array.from({ length: count }, (_, i) => ({ name: `l${i}`, hostname: `${prefix}${i}.${ZONE}` }));
}

function render(objects: { gateways: readonly KubeObject[]; policies: readonly KubeObject[] }): { text: string; names: readonly NameRecord[] } {
  const inputs = new GatewayInputs([ZONE], { warn: () => undefined, flush: () => undefined });
  inputs.set('gateways', objects.gateways);
  inputs.set('dnspolicies', objects.policies);
  const spec = { ...specFromConfig(EXAMPLE_CONFIG, ['127.0.0.1']), gateway: { zones: [ZONE], geoCode: undefined, owners: inputs.contribution().gatewayOwners ?? [] } };
  const { recordSet } = buildRecordSet(spec, new Map());
  return { text: renderCorefile(recordSet, builtinTemplate(), 'builtin'), names: recordSet.names };
}

async function answers(text: string, questions: readonly string[]): Promise<string[][]> {
  // Nothing listens upstream: a name no block answers comes back empty (SERVFAIL) quickly.
  const server = await startCorefileServer(text, { upstreamTimeoutMs: 50, forwardDeadlineMs: 100 });
  try {
    return await Promise.all(questions.map((q) => ask(server, q, 'A')));
  } finally {
    await server.close();
  }
}

const blockCount = (text: string): number => text.split('\n').filter((l) => l.startsWith('    template IN A ')).length;

test('the hosts of one simple Gateway share one block pair, and each host is answered with its addresses', async () => {
  const { text } = render({ gateways: [gateway('simple', listeners('s', 40), [{ value: '192.0.2.10' }])], policies: [simple] });
  assert.is(blockCount(text), 4, 'api, api-int, *.apps and one for the 40 hosts');
  const got = await answers(text, [`s0.${ZONE}`, `s39.${ZONE}`, `s40.${ZONE}`]);
  assert.equal(got[0], [`s0.${ZONE} A 192.0.2.10`]);
  assert.equal(got[1], [`s39.${ZONE} A 192.0.2.10`]);
  assert.equal(got[2], [], 'a name of the zone no listener has is not answered from the block');
});

test("a load-balanced Gateway's hosts, klb, geo and leaf names take four block pairs, each answered with its whole chain", async () => {
  const { text } = render({ gateways: [gateway('balanced', listeners('b', 30), [{ value: '192.0.2.20' }])], policies: [balanced] });
  assert.is(blockCount(text), 3 + 4);
  const leaf = leafLabel(NS, 'balanced');
  const host = `b7.${ZONE}`;
  const [fromHost, fromGeo, fromLeaf] = await answers(text, [host, `geo-eu.klb.${host}`, `${leaf}.klb.${host}`]);
  assert.equal(fromHost, [`${host} CNAME klb.${host}`, `klb.${host} CNAME geo-eu.klb.${host}`, `geo-eu.klb.${host} CNAME ${leaf}.klb.${host}`, `${leaf}.klb.${host} A 192.0.2.20`]);
  assert.equal(fromGeo, [`geo-eu.klb.${host} CNAME ${leaf}.klb.${host}`, `${leaf}.klb.${host} A 192.0.2.20`]);
  assert.equal(fromLeaf, [`${leaf}.klb.${host} A 192.0.2.20`]);
});

test('Gateways with different addresses never share a block', async () => {
  const { text } = render({
    gateways: [gateway('simple', listeners('s', 3), [{ value: '192.0.2.10' }]), gateway('other', listeners('o', 3), [{ value: '192.0.2.11' }])],
    policies: [simple, dnsPolicy('other', { gateway: 'other' })],
  });
  assert.is(blockCount(text), 3 + 2);
  assert.equal(await answers(text, [`s1.${ZONE}`, `o1.${ZONE}`]), [[`s1.${ZONE} A 192.0.2.10`], [`o1.${ZONE} A 192.0.2.11`]]);
});

test("the cluster's own LB names keep a block each, even when they answer the same addresses", () => {
  const record = (name: string, source: string): NameRecord => ({ name, zone: name, match: `^${name.replaceAll('.', '\\.')}\\.$`, v4: ['10.0.0.5'], v6: [], source });
  const blocks = templateBlocks([record('api.c1.example.com', 'api'), record('api-int.c1.example.com', 'api-int')], 60);
  assert.equal(
    blocks.map((b) => b.match),
    ['^api\\.c1\\.example\\.com\\.$', '^api-int\\.c1\\.example\\.com\\.$'],
  );
});

test('a block holds at most 1,000 names; the rest go to the next block with the same answers', () => {
  const names: NameRecord[] = Array.from({ length: 2500 }, (_, i) => ({ name: `h${i}.${ZONE}`, zone: `h${i}.${ZONE}`, match: '', v4: ['192.0.2.1'], v6: [], source: 'dnspolicy/x/y' }));
  assert.equal(
    templateBlocks(names, 60).map((b) => b.comment.split(',')[0]),
    ['1000 names', '1000 names', '500 names'],
  );
});

test('wildcards of one depth with the same answers share a block after every exact name, and exact names still win', async () => {
  const { text, names } = render({
    gateways: [gateway('simple', [{ name: 'a', hostname: `*.a.${ZONE}` }, { name: 'b', hostname: `*.b.${ZONE}` }, { name: 'x', hostname: `x.a.${ZONE}` }], [{ value: '192.0.2.10' }]), gateway('other', [{ name: 'y', hostname: `y.a.${ZONE}` }], [{ value: '192.0.2.11' }])],
    policies: [simple, dnsPolicy('other', { gateway: 'other' })],
  });
  assert.ok(names.some((n) => n.name === `*.a.${ZONE}`));
  assert.equal(await answers(text, [`deep.q.a.${ZONE}`, `q.b.${ZONE}`, `y.a.${ZONE}`]), [[`deep.q.a.${ZONE} A 192.0.2.10`], [`q.b.${ZONE} A 192.0.2.10`], [`y.a.${ZONE} A 192.0.2.11`]]);
});

test('10,000 hosts of 200 Gateways, half load-balanced, render to a few hundred block pairs', () => {
  const gateways: KubeObject[] = [];
  const policies: KubeObject[] = [];
  for (let g = 0; g < 200; g++) {
    gateways.push(gateway(`g${g}`, listeners(`h${g}-`, 50), [{ value: `10.100.${Math.floor(g / 250)}.${(g % 250) + 1}` }]));
    policies.push(dnsPolicy(`g${g}`, { gateway: `g${g}` }, g % 2 === 0 ? {} : { loadBalancing: { weight: 100, geo: 'GEO-EU', defaultGeo: true } }));
  }
  const { text, names } = render({ gateways, policies });
  assert.is(names.length, 3 + 5000 + 5000 * 4);
  assert.is(blockCount(text), 3 + 100 + 100 * 4);
  assert.ok(text.length < 1_000_000, `${text.length} bytes`);
});

test.run();
