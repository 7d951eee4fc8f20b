import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { infrastructureContribution, platformOf, platformStatusKey, type Infrastructure } from '../lib/sources/infra-lbs.js';

function collector() {
  const warnings: { msg: string; fields: Record<string, unknown> }[] = [];
  const warn = (msg: string, fields: Record<string, unknown>): void => {
    warnings.push({ msg, fields });
  };
  return { warnings, warn, messages: () => warnings.map((w) => w.msg) };
}

function infra(type: string, key: 'aws' | 'gcp' | 'azure', cloudLoadBalancerConfig: unknown): Infrastructure {
  return { metadata: { name: 'cluster' }, status: { platformStatus: { type, [key]: { cloudLoadBalancerConfig } } } } as Infrastructure;
}

const ip = (ip: string) => ({ kind: 'ip', ip });
const FIELD = 'infrastructure cluster status.platformStatus.aws.cloudLoadBalancerConfig.clusterHosted';

test('AWS, GCP and Azure are the platforms; anything else is none', () => {
  assert.is(platformOf(infra('AWS', 'aws', undefined)), 'AWS');
  assert.is(platformOf(infra('GCP', 'gcp', undefined)), 'GCP');
  assert.is(platformOf(infra('Azure', 'azure', undefined)), 'Azure');
  assert.is(platformOf(infra('BareMetal', 'aws', undefined)), undefined);
  assert.is(platformOf(infra('toString', 'aws', undefined)), undefined);
  assert.is(platformOf({ status: {} }), undefined);
  assert.is(platformOf(undefined), undefined);
});

test('each platform reads its own platformStatus key', () => {
  assert.is(platformStatusKey('AWS'), 'aws');
  assert.is(platformStatusKey('GCP'), 'gcp');
  assert.is(platformStatusKey('Azure'), 'azure');
});

test('ClusterHosted lists become ip endpoints for api-int and api', () => {
  const { warn, warnings } = collector();
  const c = infrastructureContribution(
    infra('AWS', 'aws', {
      dnsType: 'ClusterHosted',
      clusterHosted: { apiIntLoadBalancerIPs: ['10.0.0.10', '10.0.0.11'], apiLoadBalancerIPs: ['2001:DB8::5'] },
    }),
    warn,
  );
  assert.equal(c, { publishedLbs: { 'api-int': [ip('10.0.0.10'), ip('10.0.0.11')], api: [ip('2001:db8::5')] } });
  assert.equal(warnings, []);
});

test('ingressLoadBalancerIPs says nothing about ingress: the router Service does, and a stale copy must not outlive it', () => {
  const { warn, warnings } = collector();
  const c = infrastructureContribution(
    infra('AWS', 'aws', { dnsType: 'ClusterHosted', clusterHosted: { apiIntLoadBalancerIPs: ['10.0.0.10'], ingressLoadBalancerIPs: ['10.0.1.30', '10.0.1.30 }'] } }),
    warn,
  );
  assert.equal(c.publishedLbs?.ingress, undefined);
  assert.equal(warnings, [], 'the unread list is not even validated');
});

test('GCP lists are read from platformStatus.gcp', () => {
  const { warn } = collector();
  const c = infrastructureContribution(infra('GCP', 'gcp', { dnsType: 'ClusterHosted', clusterHosted: { apiLoadBalancerIPs: ['203.0.113.5'] } }), warn);
  assert.equal(c.publishedLbs?.api, [ip('203.0.113.5')]);
});

test('under ClusterHosted a missing list is an empty one', () => {
  const { warn, warnings } = collector();
  const c = infrastructureContribution(infra('AWS', 'aws', { dnsType: 'ClusterHosted' }), warn);
  assert.equal(c, { publishedLbs: { 'api-int': [], api: [] } });
  assert.equal(warnings, []);
});

test('PlatformDefault says nothing about the LBs', () => {
  const { warn, warnings } = collector();
  assert.equal(infrastructureContribution(infra('AWS', 'aws', { dnsType: 'PlatformDefault' }), warn), {});
  assert.equal(warnings, []);
});

test('a config without dnsType, or none at all, says nothing about the LBs', () => {
  const { warn } = collector();
  assert.equal(infrastructureContribution(infra('AWS', 'aws', { clusterHosted: { apiLoadBalancerIPs: ['203.0.113.5'] } }), warn), {});
  assert.equal(infrastructureContribution(infra('AWS', 'aws', null), warn), {});
  assert.equal(infrastructureContribution(undefined, warn), {});
});

test('an unsupported platform says nothing about the LBs, even with a ClusterHosted config', () => {
  const { warn } = collector();
  const c = infrastructureContribution(infra('BareMetal', 'aws', { dnsType: 'ClusterHosted', clusterHosted: { apiLoadBalancerIPs: ['203.0.113.5'] } }), warn);
  assert.equal(c, {});
});

test('another platform’s key is not read', () => {
  const { warn } = collector();
  const c = infrastructureContribution(infra('GCP', 'aws', { dnsType: 'ClusterHosted', clusterHosted: { apiLoadBalancerIPs: ['203.0.113.5'] } }), warn);
  assert.equal(c, {});
});

test('empty, malformed and duplicate IPs are skipped with warnings naming the list and index', () => {
  const { warn, messages } = collector();
  const c = infrastructureContribution(
    infra('AWS', 'aws', {
      dnsType: 'ClusterHosted',
      clusterHosted: { apiIntLoadBalancerIPs: ['', '010.0.0.1', '10.0.0.256', 'fe80::1%eth0', '10.0.0.1', '10.0.0.1'] },
    }),
    warn,
  );
  assert.equal(c.publishedLbs?.['api-int'], [ip('10.0.0.1')]);
  assert.equal(
    messages().map((m) => m.split(':')[0]),
    [0, 1, 2, 3, 5].map((i) => `${FIELD}.apiIntLoadBalancerIPs[${i}]`),
  );
});

test('Corefile syntax in a list entry is skipped with a warning', () => {
  const { warn, messages } = collector();
  const c = infrastructureContribution(
    infra('AWS', 'aws', { dnsType: 'ClusterHosted', clusterHosted: { apiIntLoadBalancerIPs: ['10.0.0.1 }', '{{ .Name }}', '10.0.0.2\nlog'] } }),
    warn,
  );
  assert.equal(c.publishedLbs?.['api-int'], []);
  assert.is(messages().length, 3);
});

test('more than 16 IPs in a list are capped at 16 with a warning', () => {
  const { warn, messages } = collector();
  const ips = Array.from({ length: 17 }, (_, i) => `10.0.2.${i + 1}`);
  const c = infrastructureContribution(infra('AWS', 'aws', { dnsType: 'ClusterHosted', clusterHosted: { apiLoadBalancerIPs: ips } }), warn);
  assert.equal(c.publishedLbs?.api, ips.slice(0, 16).map(ip));
  assert.is(messages().length, 1);
  assert.ok(messages()[0]?.startsWith(`${FIELD}.apiLoadBalancerIPs: 17 distinct entries exceed`), messages()[0]);
});

test.run();
