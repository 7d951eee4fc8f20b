import { test } from 'uvu';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { node, readAnswers, rejects, sleep, startMonitor, until, UPSTREAM } from './support/cluster-fixture.js';
import { API_VIP, DOMAIN, HNS, hostedNetServices, INGRESS_VIP, withOnPrem } from './support/on-prem-fixture.js';
import { logLines, runLbdns } from './support/run-cli.js';

const APPS = `*.apps.${DOMAIN}`;

test('the real API server takes the HostedNetServices CRD as a structural schema and serves it', async () => {
  await withOnPrem({ switches: true }, async (c) => {
    const crd = await c.server.call<{ status: { conditions: { type: string; status: string }[] } }>('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/hostednetservices.lbdns.io');
    const conditions = Object.fromEntries(crd.status.conditions.map((x) => [x.type, x.status]));
    assert.is(conditions.Established, 'True');
    assert.is(conditions.NonStructuralSchema, undefined);
  });
});

test("each node's monitor records what its CoreDNS answers for api-int in the status, one entry per node, which the real CRD keeps", async () => {
  await withOnPrem({ switches: true }, async (c) => {
    await c.server.create(hostedNetServices({}));
    const first = await startMonitor(c, { nodeName: 'master-0' });
    const second = await startMonitor({ ...c, out: join(c.dir, 'master-1.Corefile') }, { nodeName: 'master-1' });
    try {
      const nodes = async () => ((await c.server.get<{ status?: { nodes?: { name: string; apiIntServes: string }[] } }>(HNS))?.status?.nodes ?? []);
      await until('both nodes recorded', async () => (await nodes()).length === 2, 10_000);
      assert.equal(await nodes(), [
        { name: 'master-0', apiIntServes: API_VIP },
        { name: 'master-1', apiIntServes: API_VIP },
      ]);
    } finally {
      await first.stop();
      await second.stop();
    }
  });
});

test('where no node holds the API VIP (a UserManaged load balancer behind the VIP fields), the first Node by name writes the conditions', async () => {
  await withOnPrem({ switches: true, status: { apiServerInternalIPs: [API_VIP], ingressIPs: [INGRESS_VIP], loadBalancer: { type: 'UserManaged' } } }, async (c) => {
    await c.server.create(node('master-1', ['192.168.111.21']));
    await c.server.create(hostedNetServices({}));
    type Status = { status?: { conditions?: { type: string; status: string; message: string }[] } };
    const conditions = async () => ((await c.server.get<Status>(HNS))?.status?.conditions ?? []).map((x) => `${x.type}=${x.status}`).sort();
    const second = await startMonitor({ ...c, out: join(c.dir, 'master-1.Corefile') }, { nodeName: 'master-1' });
    try {
      const entries = async () => ((await c.server.get<{ status?: { nodes?: NodeEntry[] } }>(HNS))?.status?.nodes ?? []).map((n) => n.name);
      await until("master-1's entry", async () => (await entries()).includes('master-1'), 10_000);
      assert.equal(await conditions(), [], 'master-1 is not the first Node');
      const first = await startMonitor(c, { nodeName: 'master-0' });
      try {
        await until('the conditions', async () => (await conditions()).includes('ApiIntOnAllNodes=True'), 15_000);
        assert.equal(await conditions(), ['ApiIntOnAllNodes=True', 'ApiIntServed=True', 'Degraded=False']);
      } finally {
        await first.stop();
      }
    } finally {
      await second.stop();
    }
  });
});

test('cluster-wide, the status and display say which node has not switched yet, and ApiIntOnAllNodes turns True once every node has', async () => {
  // 127.0.0.1 is an address of this machine: master-0's monitor holds the API VIP and writes the conditions.
  await withOnPrem({ switches: true, status: { apiServerInternalIPs: ['127.0.0.1'], ingressIPs: [INGRESS_VIP] } }, async (c) => {
    await c.server.create(node('master-1', ['192.168.111.21']));
    await c.server.create(hostedNetServices({}));
    type Status = { status?: { conditions?: { type: string; status: string; message: string }[] } };
    const onAllNodes = async () => ((await c.server.get<Status>(HNS))?.status?.conditions ?? []).find((x) => x.type === 'ApiIntOnAllNodes');
    const first = await startMonitor(c, { nodeName: 'master-0' });
    let second: Awaited<ReturnType<typeof startMonitor>> | undefined;
    try {
      await until('master-0 reported', async () => (await onAllNodes())?.message.includes('1 of 2') === true, 10_000);
      assert.equal(await onAllNodes().then((x) => [x?.status, x?.message]), ['False', '1 of 2 nodes answer api-int with 127.0.0.1; master-1 has not reported']);
      const shown = await runLbdns(['display', c.kubeconfig, '--upstream', UPSTREAM, '--wait-timeout', '5s']);
      assert.is(shown.code, 0, shown.stderr);
      const rollout = (JSON.parse(shown.stdout) as { apiIntRollout?: { complete: boolean; nodes: unknown[] } }).apiIntRollout;
      assert.equal(rollout?.complete, false);
      assert.equal(rollout?.nodes, [{ name: 'master-0', apiIntServes: '127.0.0.1', done: true }, { name: 'master-1', done: false }]);
      second = await startMonitor({ ...c, out: join(c.dir, 'master-1.Corefile') }, { nodeName: 'master-1' });
      await until('both nodes counted', async () => (await onAllNodes())?.status === 'True', 15_000);
      assert.is((await onAllNodes())?.message, '2 of 2 nodes answer api-int with 127.0.0.1');
    } finally {
      await first.stop();
      await second?.stop();
    }
  });
});

test('the API server refuses an apiintIpAddress that is not an IP, and any object not named cluster', async () => {
  await withOnPrem({ switches: true }, async (c) => {
    await rejects(c.server.create(hostedNetServices({ apiintIpAddress: '10.0.0.300' })), /apiintIpAddress must be an IPv4 or IPv6 address/);
    await rejects(c.server.create(hostedNetServices({ apiintIpAddress: 'api.example.com' })), /apiintIpAddress must be an IPv4 or IPv6 address/);
    await rejects(c.server.create(hostedNetServices({ nodesResolution: 'Off' })), /Unsupported value: "Off"/);
    await rejects(c.server.create(hostedNetServices({}, 'other')), /there is one HostedNetServices and it is named cluster/);
    const created = await c.server.create(hostedNetServices({ apiintIpAddress: 'fd00::5' })) as { spec: { dns: Record<string, string> } };
    assert.equal(created.spec.dns, { apiintIpAddress: 'fd00::5', nodesResolution: 'Enabled', appsResolution: 'Enabled' });
  });
});

test('without the CRD everything is served and the log says where the switches would come from', async () => {
  await withOnPrem({}, async (c) => {
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM, '--wait-timeout', '5s']);
    assert.is(r.code, 0, r.stderr);
    const answers = await readAnswers(c.out);
    assert.equal(answers?.names.get(APPS), [`A ${INGRESS_VIP}`]);
    assert.ok(answers?.nodes.has('master-0'));
    assert.ok(logLines(r.stderr).some((l) => String(l.msg).startsWith('no HostedNetServices CRD')), r.stderr);
  });
});

test('a CRD installed while the monitor runs is picked up without a restart: its switches reach the Corefile', async () => {
  await withOnPrem({}, async (c) => {
    const monitor = await startMonitor(c, { nodeName: 'master-0' });
    try {
      await until('the first Corefile', async () => (await readAnswers(c.out))?.nodes.has('master-0') === true, 10_000);
      await c.server.installHostedNetServices();
      await c.server.create(hostedNetServices({ nodesResolution: 'Disabled' }));
      await until('the switch served', async () => (await readAnswers(c.out))?.nodes.size === 0, 25_000);
      assert.equal((await readAnswers(c.out))?.names.get(APPS), [`A ${INGRESS_VIP}`]);
      const said = monitor.logs().map((l) => String(l.msg));
      assert.ok(said.some((m) => m.startsWith('no HostedNetServices CRD')), said.join('\n'));
      assert.ok(said.includes('HostedNetServices CRD installed: its switches are read now'), said.join('\n'));
    } finally {
      await monitor.stop();
    }
  });
});

test('a CRD removed while the monitor runs takes its switches with it: everything is served again, and the monitor looks for the CRD again', async () => {
  await withOnPrem({ switches: true }, async (c) => {
    await c.server.create(hostedNetServices({ nodesResolution: 'Disabled' }));
    const monitor = await startMonitor(c, { nodeName: 'master-0' });
    try {
      await until('the switch served', async () => (await readAnswers(c.out))?.nodes.size === 0, 10_000);
      await c.server.removeHostedNetServices();
      await until('nodes served again', async () => (await readAnswers(c.out))?.nodes.has('master-0') === true, 25_000);
      await until('looking for the CRD again', () => monitor.logs().some((l) => String(l.msg).startsWith('no HostedNetServices CRD (or it was removed)')), 15_000);
    } finally {
      await monitor.stop();
    }
  });
});

test("nodes whose monitors ran before the HostedNetServices object existed record themselves once it is created", async () => {
  await withOnPrem({ switches: true, status: { apiServerInternalIPs: ['127.0.0.1'], ingressIPs: [INGRESS_VIP] } }, async (c) => {
    await c.server.create(node('master-1', ['192.168.111.21']));
    const first = await startMonitor(c, { nodeName: 'master-0' });
    const second = await startMonitor({ ...c, out: join(c.dir, 'master-1.Corefile') }, { nodeName: 'master-1' });
    try {
      await until('both Corefiles', async () => (await readAnswers(c.out)) !== undefined && (await readAnswers(join(c.dir, 'master-1.Corefile'))) !== undefined, 10_000);
      await c.server.create(hostedNetServices({}));
      type Status = { status?: { nodes?: unknown[]; conditions?: { type: string; status: string }[] } };
      await until('both entries and the condition', async () => {
        const status = (await c.server.get<Status>(HNS))?.status;
        return status?.nodes?.length === 2 && status.conditions?.some((x) => x.type === 'ApiIntOnAllNodes' && x.status === 'True') === true;
      }, 15_000);
    } finally {
      await first.stop();
      await second.stop();
    }
  });
});

type NodeEntry = { readonly name: string; readonly apiIntServes: string };
type OnPrem = Parameters<Parameters<typeof withOnPrem>[1]>[0];

/** master-0's monitor running on a HostedNetServices object, its status entry recorded; another node holds the API VIP and writes the conditions. */
async function withRecordedNode(body: (c: OnPrem, nodes: () => Promise<NodeEntry[]>) => Promise<void>): Promise<void> {
  await withOnPrem({ switches: true }, async (c) => {
    await c.server.create(hostedNetServices({}));
    await c.server.patchStatus(HNS, { apiServerInternalIpOwner: 'master-1' });
    const monitor = await startMonitor(c, { nodeName: 'master-0' });
    try {
      const nodes = async () => (await c.server.get<{ status?: { nodes?: NodeEntry[] } }>(HNS))?.status?.nodes ?? [];
      await until('the entry', async () => (await nodes()).length === 1, 10_000);
      await body(c, nodes);
    } finally {
      await monitor.stop();
    }
  });
}

test("a node whose dnsmasq hosts file cannot be written does not report api-int's address until the file holds it", async () => {
  await withOnPrem({ switches: true }, async (c) => {
    await c.server.create(hostedNetServices({}));
    // A directory where the hosts file is made: every write of the drop-in's files fails.
    const staging = join(c.dir, 'lbdns.hosts.staging', 'api-int');
    await mkdir(staging, { recursive: true });
    const monitor = await startMonitor(c, { nodeName: 'master-0', dnsmasqOut: join(c.dir, 'lbdns.conf'), flags: { listen: '127.0.0.1:5353' } });
    try {
      const nodes = async () => (await c.server.get<{ status?: { nodes?: NodeEntry[] } }>(HNS))?.status?.nodes ?? [];
      await until('the failed drop-in logged', async () => monitor.logs().some((l) => String(l.msg).startsWith('writing the dnsmasq drop-in failed')), 10_000);
      await sleep(1500);
      assert.equal(await nodes(), []);
      await rm(staging, { recursive: true });
      await until('the entry, once the hosts file is written', async () => (await nodes()).length === 1, 10_000);
      assert.equal(await nodes(), [{ name: 'master-0', apiIntServes: API_VIP }]);
    } finally {
      await monitor.stop();
    }
  });
});

test("a node's entry removed from the status is written again by its monitor", async () => {
  await withRecordedNode(async (c, nodes) => {
    await c.server.patchStatus(HNS, { nodes: [] });
    await until('the entry again', async () => (await nodes()).length === 1, 10_000);
    assert.equal(await nodes(), [{ name: 'master-0', apiIntServes: API_VIP }]);
  });
});

test("a status that keeps losing a node's entry is mended once a look (30 s), not on every event", async () => {
  await withRecordedNode(async (c, nodes) => {
    await c.server.patchStatus(HNS, { nodes: [] });
    await until('the entry mended', async () => (await nodes()).length === 1, 10_000);
    await c.server.clearRequests();
    await c.server.patchStatus(HNS, { nodes: [] });
    await sleep(3000);
    assert.equal(await nodes(), []);
    assert.equal((await c.server.requests()).filter((r) => r.verb === 'patch' && r.resource === 'hostednetservices'), []);
  });
});

test('with the CRD but no object, everything is served', async () => {
  await withOnPrem({ switches: true }, async (c) => {
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM, '--wait-timeout', '5s']);
    assert.is(r.code, 0, r.stderr);
    const answers = await readAnswers(c.out);
    assert.equal(answers?.names.get(APPS), [`A ${INGRESS_VIP}`]);
    assert.ok(answers?.nodes.has('master-0'));
  });
});

test('nodesResolution Disabled: no node records; api, api-int and *.apps still served', async () => {
  await withOnPrem({ switches: true }, async (c) => {
    await c.server.create(hostedNetServices({ nodesResolution: 'Disabled' }));
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM, '--wait-timeout', '5s']);
    assert.is(r.code, 0, r.stderr);
    const answers = await readAnswers(c.out);
    assert.equal(answers?.nodes.size, 0);
    assert.equal(answers?.names.get(`api-int.${DOMAIN}`), [`A ${API_VIP}`]);
    assert.equal(answers?.names.get(APPS), [`A ${INGRESS_VIP}`]);
  });
});

test('appsResolution Disabled: no *.apps record, and display says why', async () => {
  await withOnPrem({ switches: true }, async (c) => {
    await c.server.create(hostedNetServices({ appsResolution: 'Disabled' }));
    const r = await runLbdns(['display', c.kubeconfig, '--upstream', UPSTREAM, '--wait-timeout', '5s']);
    assert.is(r.code, 0, r.stderr);
    const view = JSON.parse(r.stdout) as { withheld: { name: string; reason: string }[]; recordSet: { names: { name: string }[]; nodes: unknown[] } };
    assert.equal(view.withheld, [{ name: APPS, reason: 'hostednetservices cluster spec.dns.appsResolution is Disabled' }]);
    assert.equal(view.recordSet.names.map((n) => n.name).sort(), [`api-int.${DOMAIN}`, `api.${DOMAIN}`]);
    assert.is(view.recordSet.nodes.length, 1);
  });
});

test('the monitor applies each switch, off and on again, within one propagation', async () => {
  await withOnPrem({ switches: true }, async (c) => {
    await c.server.create(hostedNetServices({}));
    const monitor = await startMonitor(c);
    try {
      await until('first Corefile', async () => (await readAnswers(c.out))?.names.has(APPS) === true);
      await c.server.mergePatch(HNS, { spec: { dns: { appsResolution: 'Disabled', nodesResolution: 'Disabled' } } });
      const off = await until('*.apps and nodes dropped', async () => {
        const a = await readAnswers(c.out);
        return a?.names.has(APPS) === false && a.nodes.size === 0;
      });
      await c.server.mergePatch(HNS, { spec: { dns: { appsResolution: 'Enabled', nodesResolution: 'Enabled' } } });
      const on = await until('*.apps and nodes back', async () => {
        const a = await readAnswers(c.out);
        return a?.names.has(APPS) === true && a.nodes.size === 1;
      });
      console.log(`switch propagation: off ${off} ms, on ${on} ms`);
      assert.ok(off < 1000 && on < 1000, `${off} ms, ${on} ms`);
    } finally {
      await monitor.stop();
    }
  });
});

test.run();
