/**
 * The stack's state through the Kubernetes API, as the on-prem design wants it: the monitor on
 * the node that holds a VIP records its node name in HostedNetServices status; a node that no
 * longer holds it clears the field only if it still names itself; the API VIP's holder writes
 * the ApiIntServed and Degraded conditions.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { planVipOwners, type Condition, type VipView } from '../lib/sinks/vip-owner-status.js';
import { apiIntRollout } from '../lib/sources/hosted-net-services.js';
import { readAnswers, sleep, startMonitor, until } from './support/cluster-fixture.js';
import { DOMAIN, HNS, hostedNetServices, INGRESS_VIP, withFakeOnPrem } from './support/on-prem-fixture.js';

const NOW = '2026-11-24T12:00:00Z';
const SERVES = '192.168.111.5';
const view = (over: Partial<VipView> = {}): VipView => ({ nodeName: 'master-0', holdsApiVip: false, holdsIngressVip: false, apiIntServes: SERVES, ...over });
/** The status as this node left it: its own api-int entry is there. */
const NODES = [{ name: 'master-0', apiIntServes: SERVES }];

test('a node that holds a VIP records itself as its owner, in place of another', () => {
  assert.equal(planVipOwners({ apiServerInternalIpOwner: 'master-1', nodes: NODES }, view({ holdsApiVip: true }), NOW), { apiServerInternalIpOwner: 'master-0' });
});

test('a node that no longer holds a VIP clears the owner only if it still names itself', () => {
  assert.equal(planVipOwners({ ingressIpOwner: 'master-0', nodes: NODES }, view(), NOW), { ingressIpOwner: null });
  assert.is(planVipOwners({ ingressIpOwner: 'master-2', nodes: NODES }, view(), NOW), undefined);
});

test('nothing is written when the status already says what the node sees', () => {
  assert.is(planVipOwners({ apiServerInternalIpOwner: 'master-0', nodes: NODES }, view({ holdsApiVip: true }), NOW), undefined);
});

test("each node records what its CoreDNS answers for api-int in its own entry, leaving the other nodes' entries as they are", () => {
  const others = [{ name: 'master-1', apiIntServes: SERVES }, { name: 'master-2', apiIntServes: '10.0.0.50' }];
  assert.equal(planVipOwners({ nodes: others }, view({ apiIntServes: '10.0.0.50' }), NOW), { nodes: [{ name: 'master-0', apiIntServes: '10.0.0.50' }, ...others] });
  assert.equal(planVipOwners({ nodes: [...others, { name: 'master-0', apiIntServes: SERVES }] }, view({ apiIntServes: '10.0.0.50' }), NOW)?.nodes?.find((n) => n.name === 'master-0'), { name: 'master-0', apiIntServes: '10.0.0.50' });
});

test("the API VIP's holder writes ApiIntServed and Degraded; a transition time moves only with the status", () => {
  const pending = view({ holdsApiVip: true, apiInt: { served: 'api-int answers the API VIP', pending: 'the move to 10.0.0.50 is not verified: ECONNREFUSED' } });
  const first = planVipOwners({ apiServerInternalIpOwner: 'master-0', nodes: NODES }, pending, NOW);
  const degraded = first?.conditions?.find((c) => c.type === 'Degraded');
  assert.equal([degraded?.status, degraded?.reason, degraded?.lastTransitionTime], ['True', 'ApiIntMoveNotVerified', NOW]);
  const later = '2026-11-24T12:05:00Z';
  const again = planVipOwners({ apiServerInternalIpOwner: 'master-0', nodes: NODES, conditions: first?.conditions as Condition[] }, pending, later);
  assert.is(again, undefined, 'the same view writes nothing');
  const verified = planVipOwners({ apiServerInternalIpOwner: 'master-0', nodes: NODES, conditions: first?.conditions as Condition[] }, view({ holdsApiVip: true, apiInt: { served: 'api-int answers 10.0.0.50 (verified)', pending: undefined } }), later);
  const served = verified?.conditions?.find((c) => c.type === 'ApiIntServed');
  assert.equal([served?.status, served?.lastTransitionTime], ['True', NOW], 'ApiIntServed stayed True: its transition time stays');
  assert.equal(verified?.conditions?.find((c) => c.type === 'Degraded')?.lastTransitionTime, later);
});

test('each condition names the generation of the spec it describes (observedGeneration), so oc wait can tell it from a verdict on the spec before', () => {
  const plan = planVipOwners({ nodes: NODES }, view({ holdsApiVip: true, generation: 7, apiInt: { served: 'api-int answers the API VIP', pending: undefined } }), NOW, 7);
  assert.equal(plan?.conditions?.map((c) => [c.type, c.observedGeneration]), [['ApiIntServed', 7], ['Degraded', 7]]);
});

test('a view of an older spec than the object now holds writes no conditions: they wait for the view of the new spec', () => {
  const plan = planVipOwners({ nodes: NODES }, view({ holdsApiVip: true, generation: 7, apiInt: { served: 'api-int answers the API VIP', pending: undefined } }), NOW, 8);
  assert.is(plan?.conditions, undefined);
});

test('the rollout of api-int is complete when every Node answers the asked address; a node that did not report or answers another is named', () => {
  const asked = '10.0.0.50';
  const rollout = apiIntRollout(asked, ['master-2', 'master-0', 'master-1'], [{ name: 'master-0', apiIntServes: asked }, { name: 'master-1', apiIntServes: SERVES }, { name: 'gone', apiIntServes: SERVES }]);
  assert.is(rollout.complete, false);
  assert.equal(rollout.nodes, [
    { name: 'master-0', apiIntServes: asked, done: true },
    { name: 'master-1', apiIntServes: SERVES, done: false },
    { name: 'master-2', done: false },
  ]);
  assert.is(rollout.summary, `1 of 3 nodes answer api-int with ${asked}; master-1 answers ${SERVES}; master-2 has not reported`);
  assert.is(apiIntRollout(asked, ['master-0'], [{ name: 'master-0', apiIntServes: asked }]).complete, true);
});

test('dual stack: a node answering the same addresses in another order has moved', () => {
  assert.is(apiIntRollout('192.168.111.5,fd00::5', ['master-0'], [{ name: 'master-0', apiIntServes: 'fd00::5,192.168.111.5' }]).complete, true);
});

test("the API VIP's holder writes ApiIntOnAllNodes from the rollout, False naming the nodes not there yet", () => {
  const rollout = apiIntRollout(SERVES, ['master-0', 'master-1'], NODES);
  const patch = planVipOwners({ apiServerInternalIpOwner: 'master-0', nodes: NODES }, view({ holdsApiVip: true, apiInt: { served: SERVES, pending: undefined }, rollout }), NOW);
  const condition = patch?.conditions?.find((c) => c.type === 'ApiIntOnAllNodes');
  assert.equal([condition?.status, condition?.reason, condition?.message], ['False', 'NodesPending', `1 of 2 nodes answer api-int with ${SERVES}; master-1 has not reported`]);
});

test('on-prem, the monitor on the node holding the API VIP records itself and clears an ingress owner that named it', async () => {
  // 127.0.0.1 is an address of this machine's interfaces: this node holds the API VIP, not the ingress VIP.
  await withFakeOnPrem({ switches: true, status: { apiServerInternalIPs: ['127.0.0.1'], ingressIPs: [INGRESS_VIP] } }, async (c) => {
    c.server.create(hostedNetServices({}));
    c.server.patchStatus(HNS, { apiServerInternalIpOwner: 'master-1', ingressIpOwner: 'master-0' });
    const monitor = await startMonitor(c, { nodeName: 'master-0' });
    try {
      await until('first Corefile', async () => (await readAnswers(c.out))?.names.has(`api.${DOMAIN}`) === true);
      // until fails the test if the owners are never recorded so.
      await until('owners recorded', () => {
        const s = (c.server.get({ resource: 'hostednetservices', name: 'cluster' }) as { status?: Record<string, unknown> } | undefined)?.status;
        return s?.apiServerInternalIpOwner === 'master-0' && s.ingressIpOwner === undefined;
      });
      const conditions = () => ((c.server.get({ resource: 'hostednetservices', name: 'cluster' }) as { status?: { conditions?: Condition[] } }).status?.conditions ?? []).map((x) => [x.type, x.status]);
      await until('its own entry counted', () => conditions().some(([type, s]) => type === 'ApiIntOnAllNodes' && s === 'True'));
      assert.equal(conditions(), [['ApiIntServed', 'True'], ['Degraded', 'False'], ['ApiIntOnAllNodes', 'True']]);
    } finally {
      await monitor.stop();
    }
  });
});

test('an owner field cleared by another node (one that held the VIP a moment beside this one) is written again by the node holding the VIP', async () => {
  await withFakeOnPrem({ switches: true, status: { apiServerInternalIPs: ['127.0.0.1'], ingressIPs: [INGRESS_VIP] } }, async (c) => {
    c.server.create(hostedNetServices({}));
    const owner = () => (c.server.get({ resource: 'hostednetservices', name: 'cluster' }) as { status?: { apiServerInternalIpOwner?: string } } | undefined)?.status?.apiServerInternalIpOwner;
    const monitor = await startMonitor(c, { nodeName: 'master-0' });
    try {
      await until('owner recorded', () => owner() === 'master-0');
      const conditions = () => ((c.server.get({ resource: 'hostednetservices', name: 'cluster' }) as { status?: { conditions?: Condition[] } }).status?.conditions ?? []).map((x) => [x.type, x.status]);
      await until('its own entry counted', () => conditions().some(([type, s]) => type === 'ApiIntOnAllNodes' && s === 'True'));
      // Settled: nothing this node sees changes any more, so only the cleared field can make it write.
      await sleep(500);
      // master-1 wrote itself meanwhile, then lost the VIP and cleared the field it names.
      c.server.patchStatus(HNS, { apiServerInternalIpOwner: 'master-1' });
      c.server.patchStatus(HNS, { apiServerInternalIpOwner: null });
      await until('owner written again', () => owner() === 'master-0', 5000);
    } finally {
      await monitor.stop();
    }
  });
});

test('with dnsRecordsType External (api-int left to the external DNS, answered by no node) the API VIP holder writes no ApiIntOnAllNodes, and takes away one written before', async () => {
  await withFakeOnPrem({ switches: true, status: { apiServerInternalIPs: ['127.0.0.1'], ingressIPs: [INGRESS_VIP], dnsRecordsType: 'External' } }, async (c) => {
    c.server.create(hostedNetServices({}));
    const stale: Condition = { type: 'ApiIntOnAllNodes', status: 'False', reason: 'NodesPending', message: '0 of 1 nodes answer api-int with 127.0.0.1', lastTransitionTime: NOW };
    c.server.patchStatus(HNS, { conditions: [stale] });
    const monitor = await startMonitor(c, { nodeName: 'master-0' });
    try {
      const conditions = () => ((c.server.get({ resource: 'hostednetservices', name: 'cluster' }) as { status?: { conditions?: Condition[] } }).status?.conditions ?? []).map((x) => x.type);
      await until('the conditions written', () => conditions().includes('ApiIntServed'));
      assert.equal(conditions(), ['ApiIntServed', 'Degraded']);
    } finally {
      await monitor.stop();
    }
  });
});

test('a conflicting write (another node changed the object meanwhile) is read again and decided again', async () => {
  await withFakeOnPrem({ switches: true, status: { apiServerInternalIPs: ['127.0.0.1'], ingressIPs: [INGRESS_VIP] } }, async (c) => {
    c.server.create(hostedNetServices({}));
    let raced = false;
    c.server.beforeWrite((request) => {
      if (raced || !request.path.endsWith('/status')) return;
      raced = true;
      // Another node writes first: the resourceVersion the monitor read is stale now.
      c.server.patchStatus(HNS, { ingressIpOwner: 'worker-1' });
    });
    const monitor = await startMonitor(c, { nodeName: 'master-0' });
    try {
      await until('owner recorded after the conflict', () => (c.server.get({ resource: 'hostednetservices', name: 'cluster' }) as { status?: Record<string, unknown> }).status?.apiServerInternalIpOwner === 'master-0');
      const status = (c.server.get({ resource: 'hostednetservices', name: 'cluster' }) as { status?: Record<string, unknown> }).status;
      assert.is(status?.ingressIpOwner, 'worker-1', "another node's owner is left alone");
      const patches = c.server.requests.filter((r) => r.verb === 'patch' && r.path.endsWith('/status'));
      assert.ok(patches.some((r) => r.status === 409), 'the first write met the conflict');
      assert.ok(patches.length >= 2, `${patches.length} status patches`);
    } finally {
      await monitor.stop();
    }
  });
});

test.run();
