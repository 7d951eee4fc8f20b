/**
 * A change to one Gateway recomputes what it touches and keeps the rest, and what comes out is
 * the same as computing everything from nothing: that is what lets 10,000 hosts follow one
 * Gateway's address change quickly.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { specFromConfig } from '../lib/inputs/spec.js';
import { EXAMPLE_CONFIG } from '../lib/inputs/example.js';
import { DEFAULTS, type ClusterSpec, type GatewayEndpoint, type GatewayRecordType, type NameRecord, type OwnedEndpoints, type RecordSet, type Resolution } from '../lib/model.js';
import { ClaimIndex } from '../lib/resolve/gateway-claims.js';
import type { AcceptedGatewayNames } from '../lib/resolve/gateway-names.js';
import { GatewayRecordBook, type GatewayRecords } from '../lib/resolve/gateway-records.js';
import { KeptOrder } from '../lib/resolve/kept-order.js';
import { nameGuard } from '../lib/resolve/name-guard.js';
import { buildRecordSet } from '../lib/resolve/record-set.js';
import { countByKind } from '../lib/resolve/source-kind.js';
import { GatewayInputs } from '../lib/sources/gateway-sources.js';
import { dnsPolicy, gateway, ZONE } from './support/gateway-fixture.js';

const CLUSTER = `c1.${ZONE}`;
const base = specFromConfig({ ...EXAMPLE_CONFIG, domain: CLUSTER }, ['127.0.0.1']);

function owner(source: string, namespace: string, created: string, endpoints: readonly [string, GatewayRecordType, string][]): OwnedEndpoints {
  return { source, namespace, created, zone: ZONE, endpoints: endpoints.map(([dnsName, recordType, target]) => ({ dnsName, recordType, targets: [target], ttl: 60, setIdentifier: '' })) };
}

function view(index: ClaimIndex) {
  return {
    claims: Object.fromEntries([...index.byName].map(([name, claims]) => [name, claims.map((c) => `${c.owner.source} ${c.endpoint.recordType} ${c.endpoint.targets.join(',')}`)])),
    refused: index.refused().map((r) => `${r.name} ${r.source} ${r.reason}`).sort(),
    external: index.external(),
    lostBy: Object.fromEntries([...index.lostBy].map(([name, namespaces]) => [name, [...namespaces].sort()])),
  };
}

function fromNothing(owners: readonly OwnedEndpoints[]) {
  const index = new ClaimIndex(nameGuard(base), [ZONE]);
  index.update(owners);
  return view(index);
}

const shop = `shop.${ZONE}`;
const a = owner('a', 'x', '2026-01-01T00:00:01Z', [[shop, 'A', '192.0.2.1']]);
const b = owner('b', 'y', '2026-01-01T00:00:02Z', [[shop, 'A', '192.0.2.2']]);
const c = owner('c', 'x', '2026-01-01T00:00:03Z', [[shop, 'CNAME', `www.${ZONE}`]]);
const d = owner('d', 'x', '2026-01-01T00:00:00Z', [[`www.${ZONE}`, 'CNAME', 'lb.example.org']]);
const e = owner('e', 'x', '2026-01-01T00:00:04Z', [[`x.api.${CLUSTER}`, 'A', '192.0.2.5']]);

test('each step of a changing set of owners decides the names as computing from nothing does', () => {
  const index = new ClaimIndex(nameGuard(base), [ZONE]);
  const a2 = owner('a', 'x', '2026-01-01T00:00:01Z', [[shop, 'A', '192.0.2.9']]);
  index.update([a, b, c, d, e]);
  assert.ok(view(index).refused.includes(`x.api.${CLUSTER} e cluster-name`));
  for (const owners of [[b, c, d, e], [c, b, d], [a2, b, c, d, e], [e], [], [a, b, c, d, e]]) {
    index.update(owners);
    assert.equal(view(index), fromNothing(owners), owners.map((o) => o.source).join(' '));
  }
});

test("when the oldest owner of a name leaves, the next oldest asker serves it, whatever the other namespaces' order", () => {
  const index = new ClaimIndex(nameGuard(base), [ZONE]);
  index.update([c, b, a]);
  assert.equal(view(index).claims[shop], ['a A 192.0.2.1']);
  assert.equal(view(index).refused, [`${shop} b other-owner`, `${shop} c duplicate`]);
  index.update([c, b]);
  assert.equal(view(index).claims[shop], ['b A 192.0.2.2']);
  assert.equal(view(index).refused, [`${shop} c other-owner`]);
});

test('from nothing, the names come oldest owner first, whatever order the owners are listed in', () => {
  const index = new ClaimIndex(nameGuard(base), [ZONE]);
  index.update([e, c, d]);
  assert.equal([...index.byName.keys()], [`www.${ZONE}`, shop]);
});

test('a CNAME target is resolved by lbdns until an accepted name answers it', () => {
  const index = new ClaimIndex(nameGuard(base), [ZONE]);
  index.update([d]);
  assert.equal(index.external(), ['lb.example.org']);
  const lb = owner('lb', 'x', '2026-01-01T00:00:05Z', [['lb.example.org', 'A', '192.0.2.7']]);
  index.update([d, { ...lb, zone: 'example.org' }]);
  assert.equal(index.external(), []);
});

test('a CNAME moved to another external target is resolved at the new target, no longer at the old', () => {
  const index = new ClaimIndex(nameGuard(base), [ZONE]);
  // a and b stay: one owner of three changes, so the index is updated, not rebuilt.
  index.update([a, b, d]);
  assert.equal(index.external(), ['lb.example.org']);
  index.update([a, b, owner('d', 'x', '2026-01-01T00:00:00Z', [[`www.${ZONE}`, 'CNAME', 'lb2.example.org']])]);
  assert.equal(index.external(), ['lb2.example.org']);
});

test("an update leaves the claims of names it does not touch as they were: the same lists", () => {
  const index = new ClaimIndex(nameGuard(base), [ZONE]);
  index.update([a, d]);
  const www = index.byName.get(`www.${ZONE}`);
  index.update([owner('a', 'x', '2026-01-01T00:00:01Z', [[shop, 'A', '192.0.2.9']]), d]);
  assert.is(index.byName.get(`www.${ZONE}`), www);
});

const hosts = (g: string) => [0, 1].map((l) => ({ name: `l${l}`, hostname: `h${l}.${g}.${ZONE}` }));

function ownersAfter(inputs: GatewayInputs): readonly OwnedEndpoints[] {
  return inputs.contribution().gatewayOwners ?? [];
}

test("a change to one Gateway gives back the other Gateways' owners as the same objects", () => {
  const inputs = new GatewayInputs([ZONE], { warn: () => undefined, flush: () => undefined });
  inputs.set('dnspolicies', [dnsPolicy('p1', { gateway: 'g1' }), dnsPolicy('p2', { gateway: 'g2' })]);
  inputs.set('gateways', [gateway('g1', hosts('g1'), [{ value: '192.0.2.1' }]), gateway('g2', hosts('g2'), [{ value: '192.0.2.2' }])]);
  const before = ownersAfter(inputs);
  const g2 = gateway('g2', hosts('g2'), [{ value: '192.0.2.2' }]);
  inputs.set('gateways', [gateway('g1', hosts('g1'), [{ value: '192.0.2.3' }]), g2]);
  const after = ownersAfter(inputs);
  assert.is(after.length, 4);
  assert.is.not(after[0], before[0]);
  // g2 is a new object with the same content: read again, built again.
  assert.is.not(after[2], before[2]);
  inputs.set('gateways', [gateway('g1', hosts('g1'), [{ value: '192.0.2.4' }]), g2]);
  assert.is(ownersAfter(inputs)[2], after[2]);
  assert.is(ownersAfter(inputs)[3], after[3]);
});

test('the warnings of an object that did not change are reported at every computation', () => {
  const warned: string[] = [];
  const inputs = new GatewayInputs([ZONE], { warn: (msg) => warned.push(msg), flush: () => undefined });
  inputs.set('gateways', [gateway('g1', hosts('g1'), [{ value: '192.0.2.300' }])]);
  ownersAfter(inputs);
  assert.is(warned.length, 1);
  inputs.set('dnspolicies', [dnsPolicy('p1', { gateway: 'g1' })]);
  ownersAfter(inputs);
  assert.equal(warned, [warned[0], warned[0]]);
});

function specWith(owners: readonly OwnedEndpoints[]): ClusterSpec {
  return { ...base, gateway: { zones: [ZONE], geoCode: undefined, ttls: DEFAULTS.gatewayTtls, owners } };
}

test("a name whose answer did not change is the same record in the next record set; the changed Gateway's are new", () => {
  const inputs = new GatewayInputs([ZONE], { warn: () => undefined, flush: () => undefined });
  inputs.set('dnspolicies', [dnsPolicy('p1', { gateway: 'g1' }), dnsPolicy('p2', { gateway: 'g2' }, { loadBalancing: { weight: 100, geo: 'GEO-EU', defaultGeo: true } })]);
  const g2 = gateway('g2', hosts('g2'), [{ value: '192.0.2.2' }]);
  inputs.set('gateways', [gateway('g1', hosts('g1'), [{ value: '192.0.2.1' }]), g2]);
  const first = buildRecordSet(specWith(ownersAfter(inputs)), new Map()).recordSet;
  inputs.set('gateways', [gateway('g1', hosts('g1'), [{ value: '192.0.2.3' }]), g2]);
  const next = buildRecordSet(specWith(ownersAfter(inputs)), new Map(), { previous: first }).recordSet;
  const record = (set: typeof first, name: string) => set.names.find((n) => n.name === name);
  assert.is(record(next, `h0.g2.${ZONE}`), record(first, `h0.g2.${ZONE}`));
  assert.is.not(record(next, `h0.g1.${ZONE}`), record(first, `h0.g1.${ZONE}`));
  assert.equal(record(next, `h0.g1.${ZONE}`)?.v4, ['192.0.2.3']);
});

test("a record set's totals are its names counted by source kind and its addresses, after a change as from nothing", () => {
  const inputs = new GatewayInputs([ZONE], { warn: () => undefined, flush: () => undefined });
  inputs.set('dnspolicies', [dnsPolicy('p1', { gateway: 'g1' }), dnsPolicy('p2', { gateway: 'g2' })]);
  const g2 = gateway('g2', hosts('g2'), [{ value: '192.0.2.2' }, { value: '2001:db8::2' }]);
  let previous: RecordSet | undefined;
  for (const g1 of [[{ value: '192.0.2.1' }], [{ value: '192.0.2.3' }, { value: '192.0.2.4' }], []]) {
    inputs.set('gateways', [gateway('g1', hosts('g1'), g1), g2]);
    const { recordSet, totals } = buildRecordSet(specWith(ownersAfter(inputs)), new Map(), { previous });
    assert.equal(Object.fromEntries(totals.names), Object.fromEntries(countByKind(recordSet.names)));
    assert.is(totals.addresses + totals.gatewayAddresses, recordSet.names.reduce((n, r) => n + r.v4.length + r.v6.length, 0));
    previous = recordSet;
  }
  assert.equal(Object.fromEntries(buildRecordSet(specWith(ownersAfter(inputs)), new Map(), { previous }).totals.names), { lb: 3, dnspolicy: 2 }, 'g1 without addresses has no names');
});


/** Accepted names as acceptGatewayNames gives them: version n+1 names what changed since n. */
function acceptedSteps() {
  const index = new ClaimIndex(nameGuard(base), [ZONE]);
  let version = 0;
  return (owners: readonly OwnedEndpoints[]): AcceptedGatewayNames => {
    const names = index.update(owners);
    version += 1;
    return { byName: index.byName, refused: index.refused(), external: index.external(), lostBy: index.lostBy, version, changed: version === 1 || names === undefined ? undefined : { after: version - 1, names } };
  };
}

function fromNothingRecords(owners: readonly OwnedEndpoints[], resolutions: ReadonlyMap<string, Resolution>, previous: readonly NameRecord[]): GatewayRecords {
  return new GatewayRecordBook('GEO-EU').build(acceptedSteps()(owners), resolutions, (name) => previous.find((n) => n.name === name));
}

/** Records by content; served as a set: byName keeps a name decided again at its place, where from nothing it is listed oldest owner first. */
const content = (r: GatewayRecords) => ({ ...r, served: [...r.served].sort((x, y) => (x.name < y.name ? -1 : 1)) });

const lbOwner = (source: string, created: string, endpoints: readonly Partial<GatewayEndpoint>[]): OwnedEndpoints => ({
  source,
  namespace: 'x',
  created,
  zone: ZONE,
  endpoints: endpoints.map((e) => ({ recordType: 'CNAME', targets: [], ttl: 60, setIdentifier: '', ...e }) as GatewayEndpoint),
});
test('each step of changing owners and resolutions gives the records computing from nothing gives', () => {
  const host = `api.${ZONE}`;
  const chain = (leafTarget: string, eu: string) =>
    lbOwner('chain', '2026-01-01T00:00:01Z', [
      { dnsName: host, targets: [`klb.${host}`], ttl: 300 },
      { dnsName: `klb.${host}`, targets: [`eu.klb.${host}`], setIdentifier: 'GEO-EU', geo: 'GEO-EU' },
      { dnsName: `klb.${host}`, targets: [`us.klb.${host}`], setIdentifier: 'default', geo: '*' },
      { dnsName: `eu.klb.${host}`, targets: [eu], setIdentifier: 'a', weight: 100 },
      { dnsName: `eu.klb.${host}`, targets: ['lb.example.org'], setIdentifier: 'b', weight: 50 },
      { dnsName: `us.klb.${host}`, targets: [leafTarget] },
      { dnsName: `leaf.${ZONE}`, recordType: 'A', targets: ['192.0.2.10'] },
    ]);
  const loop = lbOwner('loop', '2026-01-01T00:00:02Z', [
    { dnsName: `p.${ZONE}`, targets: [`q.${ZONE}`] },
    { dnsName: `q.${ZONE}`, targets: [`p.${ZONE}`] },
  ]);
  const plain = (ip: string) => lbOwner('plain', '2026-01-01T00:00:03Z', [{ dnsName: `www.${ZONE}`, recordType: 'A', targets: [ip] }]);
  // An older owner of another namespace taking the chain's klb name: the host is then not served.
  const taker = { ...lbOwner('taker', '2025-01-01T00:00:00Z', [{ dnsName: `klb.${host}`, recordType: 'A', targets: ['203.0.113.66'] }]), namespace: 'y' };
  const resolved = (...v4: string[]): Map<string, Resolution> => new Map([['lb.example.org', { hostname: 'lb.example.org', v4, v6: [], ttlSeconds: 30 }]]);
  // The same objects where an owner is unchanged, as the sources give them: only what changed is decided again.
  const [local, external, p1, p2] = [chain(`leaf.${ZONE}`, `leaf.${ZONE}`), chain('lb.example.org', 'lb.example.org'), plain('192.0.2.1'), plain('192.0.2.2')];
  const steps: [readonly OwnedEndpoints[], ReadonlyMap<string, Resolution>][] = [
    [[local, loop, p1], resolved('198.51.100.1')],
    [[local, loop, p1], resolved('198.51.100.2')],
    [[local, loop, p2], resolved('198.51.100.2')],
    [[external, p2], new Map()],
    [[external, p2], resolved('198.51.100.4')],
    [[local, p2], resolved()],
    [[loop], resolved('198.51.100.3')],
    [[local, loop, p1], resolved('198.51.100.3')],
    [[local, loop, p1, taker], resolved('198.51.100.3')],
    [[local, loop, p1], resolved('198.51.100.3')],
  ];
  const book = new GatewayRecordBook('GEO-EU');
  const step = acceptedSteps();
  let previous: readonly NameRecord[] = [];
  for (const [i, [owners, resolutions]] of steps.entries()) {
    const got = book.build(step(owners), resolutions, (name) => previous.find((n) => n.name === name));
    assert.equal(content(got), content(fromNothingRecords(owners, resolutions, previous)), `step ${i}`);
    assert.is(got.totals.addresses, got.names.reduce((n, r) => n + r.v4.length + r.v6.length, 0), `step ${i}: addresses`);
    previous = got.names;
  }
  assert.ok(previous.some((n) => n.name === host), 'the chain is served at the end');
});

test('a CNAME chain to an external name follows its new resolution with the same accepted names', () => {
  const accepted = acceptedSteps()([lbOwner('c', '2026-01-01T00:00:01Z', [{ dnsName: `www.${ZONE}`, targets: ['lb.example.org'] }])]);
  const resolved = (ip: string) => new Map([['lb.example.org', { hostname: 'lb.example.org', v4: [ip], v6: [], ttlSeconds: 30 }]]);
  const book = new GatewayRecordBook(undefined);
  assert.equal(book.build(accepted, resolved('198.51.100.1'), () => undefined).names[0]?.v4, ['198.51.100.1']);
  assert.equal(book.build(accepted, resolved('198.51.100.2'), () => undefined).names[0]?.v4, ['198.51.100.2']);
});

test('kept order: replacing items keeps their places without sorting; a new key sorts; no change gives the same array', () => {
  let sorts = 0;
  const order = new KeptOrder<{ k: string; v: number }>(
    (x) => x.k,
    (a, b) => (a < b ? -1 : a > b ? 1 : 0),
    (xs) => (sorts++, xs.sort((a, b) => (a.k < b.k ? -1 : 1))),
  );
  const first = order.update(new Map([['b', { k: 'b', v: 1 }], ['a', { k: 'a', v: 1 }]]));
  assert.equal(first.map((x) => x.k), ['a', 'b']);
  const replaced = order.update(new Map([['b', { k: 'b', v: 2 }]]));
  assert.equal(replaced.map((x) => `${x.k}${x.v}`), ['a1', 'b2']);
  assert.equal(first.map((x) => `${x.k}${x.v}`), ['a1', 'b1'], 'an array given out is never changed');
  assert.is(sorts, 1);
  assert.is(order.update(new Map([['c', undefined]])), replaced);
  assert.equal(order.update(new Map([['a', undefined], ['0', { k: '0', v: 1 }]])).map((x) => x.k), ['0', 'b']);
  assert.is(sorts, 2);
});

test.run();
