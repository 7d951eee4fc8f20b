import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { DEFAULT_LB_CONFIG, lbConfigContribution } from '../lib/sources/lb-config.js';

function collector() {
  const warnings: { msg: string; fields: Record<string, unknown> }[] = [];
  const warn = (msg: string, fields: Record<string, unknown>): void => {
    warnings.push({ msg, fields });
  };
  return { warnings, warn, messages: () => warnings.map((w) => w.msg) };
}

const OBJECT = 'configmap openshift-infra/openshift-lb-config';

function configMap(data: Record<string, unknown>): V1ConfigMap {
  return { metadata: { namespace: 'openshift-infra', name: 'openshift-lb-config' }, data: data as Record<string, string> };
}

test("the default ConfigMap is the installer's openshift-lb-config in openshift-infra, on every cloud platform", () => {
  assert.equal(DEFAULT_LB_CONFIG, { namespace: 'openshift-infra', name: 'openshift-lb-config' });
});

test('the internal key gives api-int and the external key gives api', () => {
  const { warn, warnings } = collector();
  const c = lbConfigContribution(
    configMap({ 'internal-api-lb-ips': 'int-123.elb.us-east-1.amazonaws.com', 'external-api-lb-ips': '203.0.113.5' }),
    warn,
  );
  assert.equal(c, {
    lbs: {
      'api-int': [{ kind: 'hostname', hostname: 'int-123.elb.us-east-1.amazonaws.com' }],
      api: [{ kind: 'ip', ip: '203.0.113.5' }],
    },
  });
  assert.equal(warnings, []);
});

test('a value may list several endpoints separated by commas, spaces or newlines', () => {
  const { warn, warnings } = collector();
  const c = lbConfigContribution(configMap({ 'internal-api-lb-ips': '10.0.0.1, 10.0.0.2\n fd00::1,,lb.example.com\n' }), warn);
  assert.equal(c.lbs?.['api-int'], [
    { kind: 'ip', ip: '10.0.0.1' },
    { kind: 'ip', ip: '10.0.0.2' },
    { kind: 'ip', ip: 'fd00::1' },
    { kind: 'hostname', hostname: 'lb.example.com' },
  ]);
  assert.equal(warnings, []);
});

test('a missing key gives an empty list for that LB: the key was removed', () => {
  const { warn, warnings } = collector();
  const c = lbConfigContribution(configMap({ 'external-api-lb-ips': '203.0.113.5' }), warn);
  assert.equal(c.lbs?.['api-int'], []);
  assert.equal(warnings, []);
});

test('an absent ConfigMap gives empty lists for api and api-int', () => {
  const { warn, warnings } = collector();
  assert.equal(lbConfigContribution(undefined, warn), { lbs: { 'api-int': [], api: [] } });
  assert.equal(warnings, []);
});

test('an empty value gives an empty list without a warning', () => {
  const { warn, warnings } = collector();
  assert.equal(lbConfigContribution(configMap({ 'internal-api-lb-ips': ' ' }), warn).lbs?.['api-int'], []);
  assert.equal(warnings, []);
});

test('malformed IPs are skipped with a warning naming the ConfigMap and key', () => {
  const { warn, messages } = collector();
  const c = lbConfigContribution(configMap({ 'internal-api-lb-ips': '010.0.0.1 10.0.0.256 fe80::1%eth0 10.0.0.9' }), warn);
  assert.equal(c.lbs?.['api-int'], [{ kind: 'ip', ip: '10.0.0.9' }]);
  assert.equal(messages().map((m) => m.split(':')[0]), [0, 1, 2].map((i) => `${OBJECT} data.internal-api-lb-ips[${i}]`));
});

test('names carrying Corefile syntax are skipped with a warning naming the ConfigMap and key', () => {
  const { warn, messages } = collector();
  const c = lbConfigContribution(configMap({ 'external-api-lb-ips': 'a{b.example.com x"y.example.com {{.Name}}' }), warn);
  assert.equal(c.lbs?.api, []);
  assert.is(messages().length, 3);
  for (const m of messages()) assert.ok(m.startsWith(`${OBJECT} data.external-api-lb-ips[`), m);
});

test('whitespace separates entries, so "a b" is two single-label names, both refused', () => {
  const { warn, messages } = collector();
  const c = lbConfigContribution(configMap({ 'external-api-lb-ips': 'a b' }), warn);
  assert.equal(c.lbs?.api, []);
  assert.is(messages().length, 2);
  assert.match(messages()[0] ?? '', /single-label/);
});

test('injected Corefile text yields only the tokens that validate on their own: no braces, templates or directives', () => {
  const { warn } = collector();
  const c = lbConfigContribution(configMap({ 'external-api-lb-ips': '{{ .Name }}\n}\nforward . 8.8.8.8' }), warn);
  assert.equal(c.lbs?.api, [{ kind: 'ip', ip: '8.8.8.8' }]);
});

test('a value that is not a string is ignored with a warning', () => {
  const { warn, messages } = collector();
  const c = lbConfigContribution(configMap({ 'external-api-lb-ips': ['10.0.0.1'] }), warn);
  assert.equal(c.lbs?.api, []);
  assert.match(messages()[0] ?? '', /data\.external-api-lb-ips: .*is not a string/);
});

test('duplicates are kept once with a warning', () => {
  const { warn, messages } = collector();
  const c = lbConfigContribution(configMap({ 'external-api-lb-ips': '10.0.0.1,10.0.0.1,LB.example.com,lb.example.com' }), warn);
  assert.equal(c.lbs?.api, [
    { kind: 'ip', ip: '10.0.0.1' },
    { kind: 'hostname', hostname: 'lb.example.com' },
  ]);
  assert.is(messages().length, 2);
});

test('more than 16 endpoints are all kept, for serving and publishing to refuse the list whole rather than cut it', () => {
  const { warn, messages } = collector();
  const value = Array.from({ length: 20 }, (_, i) => `10.0.1.${i + 1}`).join(',');
  const c = lbConfigContribution(configMap({ 'external-api-lb-ips': value }), warn);
  assert.is(c.lbs?.api?.length, 20);
  assert.equal(messages(), []);
});

test.run();
