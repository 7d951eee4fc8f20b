import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { V1LoadBalancerIngress, V1Service } from '@kubernetes/client-node';
import { routerServiceContribution } from '../lib/sources/router-service.js';

function collector() {
  const warnings: { msg: string; fields: Record<string, unknown> }[] = [];
  const warn = (msg: string, fields: Record<string, unknown>): void => {
    warnings.push({ msg, fields });
  };
  return { warnings, warn, messages: () => warnings.map((w) => w.msg) };
}

const OBJECT = 'service openshift-ingress/router-default';

function service(ingress: unknown[]): V1Service {
  return {
    metadata: { namespace: 'openshift-ingress', name: 'router-default' },
    status: { loadBalancer: { ingress: ingress as V1LoadBalancerIngress[] } },
  };
}

test('ingress IPs become ip endpoints in order', () => {
  const { warn, warnings } = collector();
  const c = routerServiceContribution(service([{ ip: '203.0.113.10' }, { ip: '2001:DB8::10' }]), warn);
  assert.equal(c, { lbs: { ingress: [{ kind: 'ip', ip: '203.0.113.10' }, { kind: 'ip', ip: '2001:db8::10' }] } });
  assert.equal(warnings, []);
});

test('AWS hostname entries become hostname endpoints to be resolved later', () => {
  const { warn, warnings } = collector();
  const c = routerServiceContribution(service([{ hostname: 'a1b2-123.us-east-1.elb.amazonaws.com' }]), warn);
  assert.equal(c.lbs?.ingress, [{ kind: 'hostname', hostname: 'a1b2-123.us-east-1.elb.amazonaws.com' }]);
  assert.equal(warnings, []);
});

test('an entry with both ip and hostname gives its ip', () => {
  const { warn } = collector();
  const c = routerServiceContribution(service([{ ip: '203.0.113.10', hostname: 'lb.example.com' }]), warn);
  assert.equal(c.lbs?.ingress, [{ kind: 'ip', ip: '203.0.113.10' }]);
});

test('an entry with a malformed ip still gives its valid hostname, with a warning about the ip', () => {
  const { warn, messages } = collector();
  const c = routerServiceContribution(service([{ ip: '010.0.0.1', hostname: 'lb.example.com' }]), warn);
  assert.equal(c.lbs?.ingress, [{ kind: 'hostname', hostname: 'lb.example.com' }]);
  assert.is(messages().length, 1);
  assert.ok(messages()[0]?.startsWith(`${OBJECT} status.loadBalancer.ingress[0].ip`), messages()[0]);
});

test('empty entries are skipped with a warning naming the service and the entry', () => {
  const { warn, messages } = collector();
  const c = routerServiceContribution(service([{}, { ip: '' }, { ip: '203.0.113.10' }, null]), warn);
  assert.equal(c.lbs?.ingress, [{ kind: 'ip', ip: '203.0.113.10' }]);
  assert.is(messages().length, 3);
  assert.ok(messages()[0]?.startsWith(`${OBJECT} status.loadBalancer.ingress[0]:`), messages()[0]);
  assert.ok(messages()[1]?.startsWith(`${OBJECT} status.loadBalancer.ingress[1]:`), messages()[1]);
  assert.ok(messages()[2]?.startsWith(`${OBJECT} status.loadBalancer.ingress[3]:`), messages()[2]);
});

test('duplicate entries are kept once, with a warning', () => {
  const { warn, messages } = collector();
  const c = routerServiceContribution(service([{ ip: '203.0.113.10' }, { ip: '203.0.113.10' }, { hostname: 'LB.example.com' }, { hostname: 'lb.example.com.' }]), warn);
  assert.equal(c.lbs?.ingress, [
    { kind: 'ip', ip: '203.0.113.10' },
    { kind: 'hostname', hostname: 'lb.example.com' },
  ]);
  assert.is(messages().length, 2);
  assert.match(messages()[0] ?? '', /ingress\[1\].*repeats/);
  assert.match(messages()[1] ?? '', /ingress\[3\].*repeats/);
});

test('malformed IPs are skipped with a warning each', () => {
  const { warn, messages } = collector();
  const c = routerServiceContribution(service([{ ip: '010.0.0.1' }, { ip: '10.0.0.256' }, { ip: 'fe80::1%eth0' }]), warn);
  assert.equal(c.lbs?.ingress, []);
  assert.equal(messages().map((m) => m.split(':')[0]), [0, 1, 2].map((i) => `${OBJECT} status.loadBalancer.ingress[${i}].ip`));
});

test('hostnames carrying Corefile syntax are skipped with a warning naming the field', () => {
  const { warn, messages } = collector();
  const bad = ['a{b.example.com', 'x"y.example.com', 'a b.example.com', '{{ .Name }}', 'lb.example.com\nforward . 1.1.1.1'];
  const c = routerServiceContribution(service(bad.map((hostname) => ({ hostname }))), warn);
  assert.equal(c.lbs?.ingress, []);
  assert.is(messages().length, bad.length);
  messages().forEach((m, i) => assert.ok(m.startsWith(`${OBJECT} status.loadBalancer.ingress[${i}].hostname`), m));
});

test('more than 16 entries are all kept: the limit is an error where the list is used, not a silent cut', () => {
  const { warn, messages } = collector();
  const c = routerServiceContribution(service(Array.from({ length: 17 }, (_, i) => ({ ip: `203.0.113.${i + 1}` }))), warn);
  assert.is(c.lbs?.ingress?.length, 17);
  assert.equal(messages(), []);
});

test('an absent Service gives an empty ingress list: it was deleted', () => {
  const { warn, warnings } = collector();
  assert.equal(routerServiceContribution(undefined, warn), { lbs: { ingress: [] } });
  assert.equal(warnings, []);
});

test('a Service with no load balancer status yet gives an empty ingress list without a warning', () => {
  const { warn, warnings } = collector();
  assert.equal(routerServiceContribution({ metadata: { namespace: 'openshift-ingress', name: 'router-default' } }, warn), { lbs: { ingress: [] } });
  assert.equal(warnings, []);
});

test.run();
