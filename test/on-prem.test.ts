import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readAnswers, startMonitor, until, UPSTREAM } from './support/cluster-fixture.js';
import { withDnsServer } from './support/dns-server.js';
import { API_VIP, CRDS, DOMAIN, INGRESS_VIP, withFakeOnPrem, withOnPrem } from './support/on-prem-fixture.js';
import { logLines, runLbdns } from './support/run-cli.js';
import { ON_PREM_PLATFORMS } from '../lib/sources/on-prem-vips.js';

for (const crd of CRDS) {
  for (const platform of ON_PREM_PLATFORMS) {
    test(`${platform} (${crd} CRD): api and api-int answer the API VIP, *.apps the ingress VIP, nodes as always`, async () => {
      await withOnPrem({ platform, crd }, async (c) => {
        const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM, '--wait-timeout', '5s']);
        assert.is(r.code, 0, r.stderr);
        const answers = await readAnswers(c.out);
        assert.equal(answers?.names.get(`api.${DOMAIN}`), [`A ${API_VIP}`]);
        assert.equal(answers?.names.get(`api-int.${DOMAIN}`), [`A ${API_VIP}`]);
        assert.equal(answers?.names.get(`*.apps.${DOMAIN}`), [`A ${INGRESS_VIP}`]);
        assert.equal(answers?.nodes.get('master-0'), ['192.168.111.20']);
        assert.ok(!(await c.server.requests()).some((q) => q.resource === 'services'), 'no router Service is read on-prem');
      });
    });
  }

  test(`dual-stack VIPs (${crd} CRD): one A and one AAAA for each name`, async () => {
    await withOnPrem({ crd, status: { apiServerInternalIPs: [API_VIP, 'fd2e:6f44:5dd8::5'], ingressIPs: [INGRESS_VIP, 'fd2e:6f44:5dd8::4'] } }, async (c) => {
      const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM, '--wait-timeout', '5s']);
      assert.is(r.code, 0, r.stderr);
      const answers = await readAnswers(c.out);
      assert.equal(answers?.names.get(`api-int.${DOMAIN}`), [`A ${API_VIP}`, 'AAAA fd2e:6f44:5dd8::5']);
      assert.equal(answers?.names.get(`*.apps.${DOMAIN}`), [`A ${INGRESS_VIP}`, 'AAAA fd2e:6f44:5dd8::4']);
    });
  });
}

test('a cluster installed before the VIP lists: the deprecated single apiServerInternalIP and ingressIP are served', async () => {
  await withOnPrem({ platform: 'VSphere', status: { apiServerInternalIP: API_VIP, ingressIP: INGRESS_VIP } }, async (c) => {
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM, '--wait-timeout', '5s']);
    assert.is(r.code, 0, r.stderr);
    const answers = await readAnswers(c.out);
    assert.equal(answers?.names.get(`api-int.${DOMAIN}`), [`A ${API_VIP}`]);
    assert.equal(answers?.names.get(`*.apps.${DOMAIN}`), [`A ${INGRESS_VIP}`]);
  });
});

const EXTERNAL = { apiServerInternalIPs: [API_VIP], ingressIPs: [INGRESS_VIP], loadBalancer: { type: 'UserManaged' }, dnsRecordsType: 'External' };

test('dnsRecordsType External: no api, api-int nor *.apps record, only node names and forwarding', async () => {
  await withOnPrem({ status: EXTERNAL }, async (c) => {
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM, '--wait-timeout', '5s']);
    assert.is(r.code, 0, r.stderr);
    const answers = await readAnswers(c.out);
    assert.equal([...(answers?.names.keys() ?? [])], []);
    assert.equal(answers?.nodes.get('master-0'), ['192.168.111.20']);
    assert.equal(answers?.upstreams, [UPSTREAM]);
    const line = logLines(r.stderr).find((l) => String(l.msg).startsWith('not serving names the cluster leaves to other DNS servers'));
    assert.ok(line, r.stderr);
    assert.match(JSON.stringify(line?.withheld), 'dnsRecordsType is External');
  });
});

test('dnsRecordsType External: display lists api, api-int and *.apps as withheld, with the reason', async () => {
  await withOnPrem({ status: EXTERNAL }, async (c) => {
    const r = await runLbdns(['display', c.kubeconfig, '--upstream', UPSTREAM, '--wait-timeout', '5s']);
    assert.is(r.code, 0, r.stderr);
    const view = JSON.parse(r.stdout) as { withheld: { name: string; reason: string }[]; recordSet: { names: unknown[] } };
    assert.equal(view.withheld.map((w) => w.name), [`api.${DOMAIN}`, `api-int.${DOMAIN}`, `*.apps.${DOMAIN}`]);
    assert.match(view.withheld[0]?.reason ?? '', 'dnsRecordsType is External');
    assert.equal(view.recordSet.names, []);
  });
});

test('loadBalancer.type UserManaged with internal DNS: the VIP fields name the user LB and are served', async () => {
  await withOnPrem({ status: { ...EXTERNAL, dnsRecordsType: 'Internal' } }, async (c) => {
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM, '--wait-timeout', '5s']);
    assert.is(r.code, 0, r.stderr);
    assert.equal((await readAnswers(c.out))?.names.get(`api-int.${DOMAIN}`), [`A ${API_VIP}`]);
  });
});

test('on the release-4.19 CRD, which lacks dnsRecordsType, the API server drops the field and the VIPs are served', async () => {
  await withOnPrem({ crd: 'release-4.19', status: EXTERNAL }, async (c) => {
    const r = await runLbdns(['render-corefile', c.kubeconfig, '--out', c.out, '--upstream', UPSTREAM, '--wait-timeout', '5s']);
    assert.is(r.code, 0, r.stderr);
    assert.equal((await readAnswers(c.out))?.names.get(`api-int.${DOMAIN}`), [`A ${API_VIP}`]);
  });
});

test('print-records on an on-prem platform prints the VIPs for api, api-int and *.apps', async () => {
  await withOnPrem({ platform: 'OpenStack' }, async (c) => {
    const r = await runLbdns(['print-records', c.kubeconfig, '--format', 'json', '--wait-timeout', '5s']);
    assert.is(r.code, 0, r.stderr);
    const records = (JSON.parse(r.stdout) as { name: string; value: string }[]).map((x) => `${x.name} ${x.value}`);
    assert.equal(records, [`api.${DOMAIN} ${API_VIP}`, `api-int.${DOMAIN} ${API_VIP}`, `*.apps.${DOMAIN} ${INGRESS_VIP}`]);
  });
});

test('dnsRecordsType External: print-records still prints the VIPs, for the external DNS server', async () => {
  await withOnPrem({ status: EXTERNAL }, async (c) => {
    const r = await runLbdns(['print-records', c.kubeconfig, '--format', 'json', '--wait-timeout', '5s']);
    assert.is(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { name: string }[]).map((x) => x.name), [`api.${DOMAIN}`, `api-int.${DOMAIN}`, `*.apps.${DOMAIN}`]);
  });
});

test('check-dns on an on-prem platform compares the DNS server with the VIPs', async () => {
  await withOnPrem({ platform: 'Nutanix', status: EXTERNAL }, async (c) => {
    await withDnsServer(async (dns) => {
      dns.set(`api.${DOMAIN}`, { A: [API_VIP] });
      dns.set(`api-int.${DOMAIN}`, { A: ['192.168.111.99'] });
      dns.set(`probe.apps.${DOMAIN}`, { A: [INGRESS_VIP] });
      const r = await runLbdns(['check-dns', c.kubeconfig, '--wait-timeout', '5s', '--server', dns.address, '--apps-host', 'probe', '--timeout', '300ms', '--output', 'json']);
      assert.is(r.code, 3, r.stderr);
      const json = JSON.parse(r.stdout) as { checks: { query: string; verdict: string }[] };
      assert.equal(json.checks.map((x) => [x.query, x.verdict]), [[`api.${DOMAIN}`, 'ok'], [`api-int.${DOMAIN}`, 'wrong IP'], [`probe.apps.${DOMAIN}`, 'ok']]);
    });
  });
});

test('dnsRecordsType External: the monitor is ready and /readyz names what it does not serve and why', async () => {
  await withOnPrem({ status: EXTERNAL }, async (c) => {
    const monitor = await startMonitor(c);
    try {
      let body = '';
      await until('/readyz answers 200', async () => {
        const res = await fetch(`http://${monitor.health}/readyz`);
        body = await res.text();
        return res.status === 200;
      });
      assert.match(body, `not served (forwarded upstream): api-int.${DOMAIN}: dnsRecordsType is External`);
    } finally {
      await monitor.stop();
    }
  });
});

test('VIPs whose every entry is malformed are bad data, not "no VIP": api, api-int and *.apps keep what they served', async () => {
  await withFakeOnPrem({}, async (c) => {
    const monitor = await startMonitor(c);
    try {
      await until('first Corefile', async () => (await readAnswers(c.out))?.names.has(`api-int.${DOMAIN}`) === true);
      c.server.patchStatus({ resource: 'infrastructures', name: 'cluster' }, { platformStatus: { baremetal: { apiServerInternalIPs: ['192.168.111.005'], ingressIPs: ['not-an-ip'] } } });
      const names = [`api.${DOMAIN}`, `api-int.${DOMAIN}`, `*.apps.${DOMAIN}`];
      await until('the three names held', () => names.every((name) => monitor.logs().some((l) => l.msg === 'serving a name with its previous addresses' && l.name === name)));
      const answers = await readAnswers(c.out);
      assert.equal(names.map((name) => answers?.names.get(name)), [[`A ${API_VIP}`], [`A ${API_VIP}`], [`A ${INGRESS_VIP}`]]);
    } finally {
      await monitor.stop();
    }
  });
});

test.run();
