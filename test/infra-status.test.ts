import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, EXIT, ValidationError } from '../lib/errors.js';
import { lbIpLists, planStatusPatch, publishTarget, type LbIpLists } from '../lib/sinks/infra-status-plan.js';
import { DEFAULTS, type ClusterSpec, type Endpoint, type LbName, type Resolution } from '../lib/model.js';
import type { Infrastructure } from '../lib/sources/infra-lbs.js';

const ip = (value: string): Endpoint => ({ kind: 'ip', ip: value });
const host = (hostname: string): Endpoint => ({ kind: 'hostname', hostname });

function spec(lbs: Partial<Record<LbName, Endpoint[]>>): ClusterSpec {
  return {
    domain: 'c1.example.com',
    role: 'control-plane',
    lbs: { api: [], 'api-int': [], ingress: [], ...lbs },
    extraRecords: [],
    nodes: [],
    upstreams: [],
    ttl: DEFAULTS.ttl,
    reload: DEFAULTS.reload,
  };
}

function resolved(hostname: string, v4: string[], v6: string[] = []): [string, Resolution] {
  return [hostname, { hostname, v4, v6, ttlSeconds: 60 }];
}

const Lists = suite('lbIpLists');

Lists('IP endpoints and the addresses of resolved hostnames merge into one sorted, de-duplicated list, v4 before v6', () => {
  const resolutions = new Map([resolved('lb.example.com', ['10.0.1.9', '10.0.1.10'], ['fd00::9'])]);
  const lists = lbIpLists(spec({ ingress: [ip('fd00::1'), host('lb.example.com'), ip('10.0.1.10'), ip('10.0.1.2')] }), resolutions);
  assert.equal(lists.ingress, ['10.0.1.2', '10.0.1.9', '10.0.1.10', 'fd00::1', 'fd00::9']);
});

Lists('a hostname with no resolution contributes nothing', () => {
  const lists = lbIpLists(spec({ api: [host('unresolved.example.com'), ip('10.0.0.10')] }), new Map());
  assert.equal(lists, { api: ['10.0.0.10'], 'api-int': [], ingress: [] });
});

Lists('16 IPs fit in a list', () => {
  const ips = Array.from({ length: 16 }, (_, i) => ip(`10.0.2.${i + 1}`));
  assert.is(lbIpLists(spec({ 'api-int': ips }), new Map())['api-int'].length, 16);
});

Lists('17 IPs are refused with a ValidationError naming the status list', () => {
  const resolutions = new Map([resolved('lb.example.com', Array.from({ length: 16 }, (_, i) => `10.0.2.${i + 1}`))]);
  try {
    lbIpLists(spec({ api: [host('lb.example.com'), ip('10.0.3.1')] }), resolutions);
    assert.unreachable('17 IPs were accepted');
  } catch (err) {
    assert.instance(err, ValidationError);
    assert.is((err as ValidationError).field, 'apiLoadBalancerIPs');
    assert.is((err as ValidationError).exitCode, EXIT.config);
    assert.match((err as Error).message, 'at most 16');
  }
});

function infra(platformStatus: Record<string, unknown> | undefined, resourceVersion = '1042'): Infrastructure {
  return { metadata: { name: 'cluster', resourceVersion }, status: platformStatus === undefined ? {} : { platformStatus } } as Infrastructure;
}

const LISTS: LbIpLists = { api: ['10.0.0.10'], 'api-int': ['10.0.0.20'], ingress: ['10.0.1.30', 'fd00::30'] };
const ALL: LbName[] = ['api', 'api-int', 'ingress'];

function awsHosted(clusterHosted: Record<string, unknown>): Record<string, unknown> {
  return { type: 'AWS', aws: { cloudLoadBalancerConfig: { dnsType: 'ClusterHosted', clusterHosted } } };
}

const Plan = suite('planStatusPatch');

Plan('an unset dnsType is not set without the admin asking: publishing refused, naming the flag', () => {
  assert.throws(() => planStatusPatch(infra({ type: 'AWS' }), LISTS, ALL), /dnsType is not set: publishing would set it to ClusterHosted, .* pass --set-dns-type-cluster-hosted/);
});

Plan('asked to, the first write sets dnsType ClusterHosted with every owned list, preconditioned on the resourceVersion read', () => {
  const plan = planStatusPatch(infra({ type: 'AWS' }), LISTS, ALL, true);
  assert.is(plan.platform, 'AWS');
  assert.equal(plan.changed, ALL);
  assert.equal(plan.patch, {
    metadata: { resourceVersion: '1042' },
    status: {
      platformStatus: {
        aws: {
          cloudLoadBalancerConfig: {
            dnsType: 'ClusterHosted',
            clusterHosted: { apiLoadBalancerIPs: ['10.0.0.10'], apiIntLoadBalancerIPs: ['10.0.0.20'], ingressLoadBalancerIPs: ['10.0.1.30', 'fd00::30'] },
          },
        },
      },
    },
  });
});

Plan('a null cloudLoadBalancerConfig is a first write', () => {
  const plan = planStatusPatch(infra({ type: 'AWS', aws: { cloudLoadBalancerConfig: null } }), LISTS, ['api'], true);
  assert.equal(plan.changed, ['api']);
});

Plan('GCP writes under platformStatus.gcp', () => {
  const plan = planStatusPatch(infra({ type: 'GCP' }), LISTS, ['api'], true);
  assert.is(plan.platform, 'GCP');
  assert.equal(Object.keys((plan.patch as { status: { platformStatus: object } }).status.platformStatus), ['gcp']);
});

Plan('only the owned lists are written', () => {
  const plan = planStatusPatch(infra({ type: 'AWS' }), LISTS, ['api', 'api-int'], true);
  const clusterHosted = (plan.patch as { status: { platformStatus: { aws: { cloudLoadBalancerConfig: { clusterHosted: object } } } } }).status.platformStatus.aws.cloudLoadBalancerConfig.clusterHosted;
  assert.equal(Object.keys(clusterHosted).sort(), ['apiIntLoadBalancerIPs', 'apiLoadBalancerIPs']);
});

Plan('lists equal as sets, in any order, need no write', () => {
  const stored = awsHosted({ apiLoadBalancerIPs: ['10.0.0.10'], apiIntLoadBalancerIPs: ['10.0.0.20'], ingressLoadBalancerIPs: ['fd00::30', '10.0.1.30'] });
  const plan = planStatusPatch(infra(stored), LISTS, ALL);
  assert.is(plan.patch, null);
  assert.equal(plan.changed, []);
});

Plan('only the lists that differ are in the patch', () => {
  const stored = awsHosted({ apiLoadBalancerIPs: ['10.0.0.10'], apiIntLoadBalancerIPs: ['10.0.0.21'], ingressLoadBalancerIPs: ['10.0.1.30', 'fd00::30'] });
  const plan = planStatusPatch(infra(stored), LISTS, ALL);
  assert.equal(plan.changed, ['api-int']);
  assert.equal((plan.patch as { status: unknown }).status, { platformStatus: { aws: { cloudLoadBalancerConfig: { dnsType: 'ClusterHosted', clusterHosted: { apiIntLoadBalancerIPs: ['10.0.0.20'] } } } } });
});

Plan('a list lbdns knows no IP for is skipped, never emptied, and an absent list equals an empty one', () => {
  const stored = awsHosted({ apiLoadBalancerIPs: ['10.0.0.10'], ingressLoadBalancerIPs: ['10.0.1.77'] });
  const plan = planStatusPatch(infra(stored), { api: ['10.0.0.10'], 'api-int': [], ingress: [] }, ALL);
  assert.is(plan.patch, null);
  assert.equal(plan.skipped, ['api-int', 'ingress']);
});

Plan('the list of an LB one of whose host names has not answered is left alone where it would lose IPs, and said partial', () => {
  const stored = awsHosted({ apiLoadBalancerIPs: ['10.0.0.10'], apiIntLoadBalancerIPs: ['10.0.0.20', '10.0.0.21'], ingressLoadBalancerIPs: ['10.0.1.30', 'fd00::30'] });
  const plan = planStatusPatch(infra(stored), LISTS, ALL, false, ['api-int']);
  assert.is(plan.patch, null);
  assert.equal(plan.skipped, ['api-int']);
  assert.equal(plan.partial, ['api-int']);
});

Plan('the list of an LB one of whose host names has not answered is written where it only gains IPs', () => {
  const stored = awsHosted({ apiLoadBalancerIPs: ['10.0.0.10'], ingressLoadBalancerIPs: ['10.0.1.30', 'fd00::30'] });
  const plan = planStatusPatch(infra(stored), LISTS, ALL, false, ['api-int']);
  assert.equal(plan.changed, ['api-int']);
  assert.equal(plan.partial, []);
});

Plan('a list another writer owns is neither compared nor written', () => {
  const stored = awsHosted({ apiLoadBalancerIPs: ['10.0.0.10'], apiIntLoadBalancerIPs: ['10.0.0.20'], ingressLoadBalancerIPs: ['10.0.1.77'] });
  assert.is(planStatusPatch(infra(stored), LISTS, ['api', 'api-int']).patch, null);
});

Plan('a cluster set to PlatformDefault is refused, explaining that dnsType is immutable', () => {
  const stored = { type: 'AWS', aws: { region: 'us-east-1', cloudLoadBalancerConfig: { dnsType: 'PlatformDefault' } } };
  assert.throws(() => planStatusPatch(infra(stored), LISTS, ALL), (err: unknown) => err instanceof ConfigError && /PlatformDefault.*immutable/.test(err.message));
});

Plan('a platform lbdns does not publish for, or none at all, is refused naming it', () => {
  assert.throws(() => planStatusPatch(infra({ type: 'BareMetal' }), LISTS, ALL), (err: unknown) => err instanceof ConfigError && err.message.includes('"BareMetal"'));
  assert.throws(() => planStatusPatch(infra(undefined), LISTS, ALL), (err: unknown) => err instanceof ConfigError && err.message.includes('platform null'));
});

const Target = suite('publishTarget');

Target('names the platform and its status block before any LB data is known', () => {
  assert.equal(publishTarget(infra({ type: 'GCP' }), true), { platform: 'GCP', key: 'gcp' });
  assert.equal(publishTarget(infra(awsHosted({}))), { platform: 'AWS', key: 'aws' });
});

Lists.run();
Plan.run();
Target.run();
