import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CelError, evaluateCel, invalidMessage, loadCrd, unsupportedRules, validateObject } from './support/crd-validate.js';
import type { Cause, Crd } from './support/crd-validate.js';
import { CRD_DIR as CRDS } from './support/crd-validators.js';

const infrastructure = loadCrd(join(CRDS, '0000_10_config-operator_01_infrastructures-TechPreviewNoUpgrade.crd.yaml'));
const dnsRecords = loadCrd(join(CRDS, '0000_50_dns_01_dnsrecords.crd.yaml'));
const dnses = loadCrd(join(CRDS, '0000_10_config-operator_01_dnses.crd.yaml'));

const NOT_CHECKED: Cause = {
  reason: 'FieldValueInvalid',
  field: '<nil>',
  message: 'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
};

type Platform = 'aws' | 'gcp';

/** The stored Infrastructure before lbdns writes: the platform is known, its block not written yet. */
function storedInfrastructure(platform: Platform): Record<string, unknown> {
  const type = platform === 'aws' ? 'AWS' : 'GCP';
  return {
    apiVersion: 'config.openshift.io/v1',
    kind: 'Infrastructure',
    metadata: { name: 'cluster' },
    spec: { platformSpec: { type } },
    status: { platform: type, platformStatus: { type } },
  };
}

/** `stored` with `status.platformStatus.<platform>` replaced by `block`. */
function withPlatformBlock(stored: unknown, platform: Platform, block: unknown): Record<string, unknown> {
  const obj = structuredClone(stored) as { status: { platformStatus: Record<string, unknown> } };
  obj.status.platformStatus[platform] = block;
  return obj as unknown as Record<string, unknown>;
}

function writeLbConfig(platform: Platform, config: unknown, stored: unknown = storedInfrastructure(platform)) {
  const region = platform === 'aws' ? { region: 'us-east-1' } : { projectID: 'proj', region: 'us-central1' };
  const next = withPlatformBlock(stored, platform, { ...region, cloudLoadBalancerConfig: config });
  return validateObject(infrastructure, 'v1', next, stored, { subresource: 'status' });
}

function lbConfigOf(obj: unknown, platform: Platform): unknown {
  return (obj as { status: { platformStatus: Record<string, { cloudLoadBalancerConfig?: unknown }> } }).status.platformStatus[platform]?.cloudLoadBalancerConfig;
}

const CLUSTER_HOSTED = {
  dnsType: 'ClusterHosted',
  clusterHosted: {
    apiLoadBalancerIPs: ['10.0.0.1', 'fd00::1'],
    apiIntLoadBalancerIPs: ['10.0.0.2'],
    ingressLoadBalancerIPs: ['10.0.0.3', '10.0.0.4'],
  },
};

function ipsField(platform: Platform, list = 'apiLoadBalancerIPs'): string {
  return `status.platformStatus.${platform}.cloudLoadBalancerConfig.clusterHosted.${list}`;
}

function withApiIps(ips: string[]) {
  return { dnsType: 'ClusterHosted', clusterHosted: { apiLoadBalancerIPs: ips } };
}

const lb = suite('Infrastructure cloudLoadBalancerConfig status writes');

lb('a first ClusterHosted write with all three IP lists is accepted as written', () => {
  const result = writeLbConfig('aws', CLUSTER_HOSTED);
  assert.equal(result.causes, []);
  assert.equal(lbConfigOf(result.object, 'aws'), CLUSTER_HOSTED);
});

lb('an empty cloudLoadBalancerConfig is defaulted to dnsType PlatformDefault', () => {
  const result = writeLbConfig('aws', {});
  assert.equal(result.causes, []);
  assert.equal(lbConfigOf(result.object, 'aws'), { dnsType: 'PlatformDefault' });
});

lb('an aws block written without cloudLoadBalancerConfig gets a PlatformDefault one', () => {
  const stored = storedInfrastructure('aws');
  const result = validateObject(infrastructure, 'v1', withPlatformBlock(stored, 'aws', { region: 'us-east-1' }), stored, { subresource: 'status' });
  assert.equal(result.causes, []);
  assert.equal(lbConfigOf(result.object, 'aws'), { dnsType: 'PlatformDefault' });
});

lb('changing dnsType from PlatformDefault to ClusterHosted is refused as immutable', () => {
  const stored = writeLbConfig('aws', { dnsType: 'PlatformDefault' }).object;
  const result = writeLbConfig('aws', CLUSTER_HOSTED, stored);
  assert.equal(result.causes, [
    { reason: 'FieldValueInvalid', field: 'status.platformStatus.aws.cloudLoadBalancerConfig.dnsType', message: 'Invalid value: "string": dnsType is immutable' },
  ]);
});

lb('a stored aws block without cloudLoadBalancerConfig reads as PlatformDefault, so ClusterHosted is refused', () => {
  const stored = withPlatformBlock(storedInfrastructure('aws'), 'aws', { region: 'us-east-1' });
  const result = writeLbConfig('aws', CLUSTER_HOSTED, stored);
  assert.equal(result.causes.map((c) => c.message), ['Invalid value: "string": dnsType is immutable']);
});

lb('rewriting a ClusterHosted config with other IPs is accepted', () => {
  const stored = writeLbConfig('aws', CLUSTER_HOSTED).object;
  const result = writeLbConfig('aws', withApiIps(['10.0.0.9']), stored);
  assert.equal(result.causes, []);
});

lb('clusterHosted under PlatformDefault is refused on the config object', () => {
  const result = writeLbConfig('aws', { dnsType: 'PlatformDefault', clusterHosted: { apiLoadBalancerIPs: ['10.0.0.1'] } });
  assert.equal(result.causes, [
    {
      reason: 'FieldValueInvalid',
      field: 'status.platformStatus.aws.cloudLoadBalancerConfig',
      message: 'Invalid value: "object": clusterHosted is permitted only when dnsType is ClusterHosted',
    },
  ]);
});

lb('17 IPs in one list are too many, and the rules are then not checked', () => {
  const ips = Array.from({ length: 17 }, (_, i) => `10.0.0.${i + 1}`);
  const result = writeLbConfig('aws', withApiIps(ips));
  assert.equal(result.causes, [
    { reason: 'FieldValueTooMany', field: ipsField('aws'), message: 'Too many: 17: must have at most 16 items' },
    NOT_CHECKED,
  ]);
});

lb('16 IPs in one list are accepted', () => {
  const ips = Array.from({ length: 16 }, (_, i) => `10.0.0.${i + 1}`);
  assert.equal(writeLbConfig('aws', withApiIps(ips)).causes, []);
});

lb('a repeated IP is a Duplicate value at its second position', () => {
  const result = writeLbConfig('aws', withApiIps(['10.0.0.1', '10.0.0.2', '10.0.0.1']));
  assert.equal(result.causes, [{ reason: 'FieldValueDuplicate', field: `${ipsField('aws')}[2]`, message: 'Duplicate value: "10.0.0.1"' }]);
});

lb('10.0.0.256 is not a valid IP address', () => {
  const result = writeLbConfig('aws', withApiIps(['10.0.0.1', '10.0.0.256']));
  assert.equal(result.causes, [
    { reason: 'FieldValueInvalid', field: `${ipsField('aws')}[1]`, message: 'Invalid value: "string": value must be a valid IP address' },
  ]);
});

lb('010.0.0.1 is not a valid IP address: leading zeros are refused', () => {
  const result = writeLbConfig('aws', withApiIps(['010.0.0.1']));
  assert.equal(result.causes.map((c) => [c.field, c.message]), [[`${ipsField('aws')}[0]`, 'Invalid value: "string": value must be a valid IP address']]);
});

lb('IPv4-mapped IPv6 and zoned addresses are not valid IP addresses', () => {
  const result = writeLbConfig('aws', withApiIps(['::ffff:10.0.0.1', 'fe80::1%eth0', '::1']));
  assert.equal(result.causes.map((c) => c.field), [`${ipsField('aws')}[0]`, `${ipsField('aws')}[1]`]);
});

lb('an IP longer than 39 characters is too long, and the rules are then not checked', () => {
  const long = '1234:5678:9abc:def0:1234:5678:9abc:def01';
  assert.is(long.length, 40);
  const result = writeLbConfig('aws', withApiIps([long]));
  assert.equal(result.causes, [
    { reason: 'FieldValueTooLong', field: `${ipsField('aws')}[0]`, message: 'Too long: may not be more than 39 bytes' },
    NOT_CHECKED,
  ]);
});

lb('an unsupported dnsType lists the supported values', () => {
  const result = writeLbConfig('aws', { dnsType: 'Custom' });
  assert.equal(result.causes[0], {
    reason: 'FieldValueNotSupported',
    field: 'status.platformStatus.aws.cloudLoadBalancerConfig.dnsType',
    message: 'Unsupported value: "Custom": supported values: "ClusterHosted", "PlatformDefault"',
  });
});

lb('unknown fields are pruned and reported, not refused', () => {
  const result = writeLbConfig('aws', { ...CLUSTER_HOSTED, extra: true, clusterHosted: { ...CLUSTER_HOSTED.clusterHosted, bogusIPs: ['10.0.0.5'] } });
  assert.equal(result.causes, []);
  assert.equal(lbConfigOf(result.object, 'aws'), CLUSTER_HOSTED);
  assert.equal(result.unknownFields, [
    'status.platformStatus.aws.cloudLoadBalancerConfig.clusterHosted.bogusIPs',
    'status.platformStatus.aws.cloudLoadBalancerConfig.extra',
  ]);
});

lb('a status write keeps everything outside status from the stored object', () => {
  const stored = storedInfrastructure('aws');
  const next = withPlatformBlock(stored, 'aws', { region: 'us-east-1', cloudLoadBalancerConfig: CLUSTER_HOSTED });
  next.spec = { platformSpec: { type: 'GCP' } };
  const result = validateObject(infrastructure, 'v1', next, stored, { subresource: 'status' });
  assert.equal(result.causes, []);
  assert.equal((result.object as { spec: unknown }).spec, stored.spec);
});

lb('the same rules hold under gcp: a first ClusterHosted write is accepted', () => {
  const result = writeLbConfig('gcp', CLUSTER_HOSTED);
  assert.equal(result.causes, []);
  assert.equal(lbConfigOf(result.object, 'gcp'), CLUSTER_HOSTED);
});

lb('the same rules hold under gcp: dnsType is immutable once defaulted', () => {
  const stored = writeLbConfig('gcp', {}).object;
  const result = writeLbConfig('gcp', CLUSTER_HOSTED, stored);
  assert.equal(result.causes.map((c) => [c.field, c.message]), [
    ['status.platformStatus.gcp.cloudLoadBalancerConfig.dnsType', 'Invalid value: "string": dnsType is immutable'],
  ]);
});

lb('the same rules hold under gcp: too many, duplicate and invalid IPs', () => {
  const many = writeLbConfig('gcp', withApiIps(Array.from({ length: 17 }, (_, i) => `fd00::${i + 1}`)));
  assert.equal(many.causes[0], { reason: 'FieldValueTooMany', field: ipsField('gcp'), message: 'Too many: 17: must have at most 16 items' });
  const dup = writeLbConfig('gcp', withApiIps(['fd00::1', 'fd00::1']));
  assert.equal(dup.causes, [{ reason: 'FieldValueDuplicate', field: `${ipsField('gcp')}[1]`, message: 'Duplicate value: "fd00::1"' }]);
  const bad = writeLbConfig('gcp', withApiIps(['10.0.0.256']));
  assert.equal(bad.causes.map((c) => c.message), ['Invalid value: "string": value must be a valid IP address']);
});

lb('every rule under cloudLoadBalancerConfig is supported by the evaluator', () => {
  const onLbConfig = unsupportedRules(infrastructure).filter((r) => r.path.includes('cloudLoadBalancerConfig'));
  assert.equal(onLbConfig, []);
});

lb('the 422 message joins the causes as the apiserver does', () => {
  const result = writeLbConfig('aws', withApiIps(Array.from({ length: 17 }, (_, i) => `10.0.0.${i + 1}`)));
  assert.is(
    invalidMessage(infrastructure, 'cluster', result.causes),
    `Infrastructure.config.openshift.io "cluster" is invalid: [${ipsField('aws')}: Too many: 17: must have at most 16 items, ${NOT_CHECKED.field}: ${NOT_CHECKED.message}]`,
  );
});

lb.run();

const other = suite('other CRDs and write kinds');

function dnsRecord(spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'ingress.operator.openshift.io/v1',
    kind: 'DNSRecord',
    metadata: { name: 'default-wildcard', namespace: 'openshift-ingress-operator' },
    spec: { dnsName: '*.apps.example.com.', recordType: 'A', targets: ['10.0.0.3'], recordTTL: 30, ...spec },
  };
}

other('a DNSRecord with a recordType outside the enum is an Unsupported value', () => {
  const result = validateObject(dnsRecords, 'v1', dnsRecord({ recordType: 'AAAA' }));
  assert.equal(result.causes, [
    { reason: 'FieldValueNotSupported', field: 'spec.recordType', message: 'Unsupported value: "AAAA": supported values: "CNAME", "A"' },
    NOT_CHECKED,
  ]);
});

other('a DNSRecord without a required field is a Required value; a defaulted one is filled in', () => {
  const record = dnsRecord({});
  delete (record.spec as Record<string, unknown>).dnsName;
  const result = validateObject(dnsRecords, 'v1', record);
  assert.equal(result.causes, [{ reason: 'FieldValueRequired', field: 'spec.dnsName', message: 'Required value' }, NOT_CHECKED]);
  assert.is((result.object as { spec: { dnsManagementPolicy: string } }).spec.dnsManagementPolicy, 'Managed');
});

other('a wrong JSON type is reported with the type it has', () => {
  const result = validateObject(dnsRecords, 'v1', dnsRecord({ recordTTL: '30' }));
  assert.equal(result.causes[0], {
    reason: 'FieldValueTypeInvalid',
    field: 'spec.recordTTL',
    message: 'Invalid value: "string": spec.recordTTL in body must be of type integer: "string"',
  });
});

other('a create drops status, which only the status subresource writes', () => {
  const result = validateObject(dnsRecords, 'v1', { ...dnsRecord({}), status: { observedGeneration: 1 } });
  assert.equal(result.causes, []);
  assert.not.ok('status' in (result.object as object));
});

other('an update of the main resource keeps the stored status', () => {
  const stored = { ...dnsRecord({}), status: { observedGeneration: 4 } };
  const result = validateObject(dnsRecords, 'v1', { ...dnsRecord({ recordTTL: 60 }), status: { observedGeneration: 9 } }, stored);
  assert.equal((result.object as { status: unknown }).status, { observedGeneration: 4 });
});

other('an update does not fail on an invalid value it leaves unchanged', () => {
  const stored = dnsRecord({ recordTTL: -1 });
  assert.equal(validateObject(dnsRecords, 'v1', dnsRecord({ recordTTL: -1, dnsName: 'other.example.com.' }), stored).causes, []);
});

other('an update fails on an invalid value it changes', () => {
  const stored = dnsRecord({ recordTTL: -1 });
  const result = validateObject(dnsRecords, 'v1', dnsRecord({ recordTTL: -2 }), stored);
  assert.equal(result.causes, [
    { reason: 'FieldValueInvalid', field: 'spec.recordTTL', message: 'Invalid value: -2: spec.recordTTL in body should be greater than or equal to 0' },
  ]);
});

other('a DNS config rule on an object reports its message at the object', () => {
  const dns = {
    apiVersion: 'config.openshift.io/v1',
    kind: 'DNS',
    metadata: { name: 'cluster' },
    spec: { baseDomain: 'example.com', platform: { type: '', aws: { privateZoneIAMRole: 'arn:aws:iam::123456789012:role/x' } } },
  };
  const result = validateObject(dnses, 'v1', dns);
  assert.equal(result.causes, [
    { reason: 'FieldValueInvalid', field: 'spec.platform', message: 'Invalid value: "object": aws configuration is required when platform is AWS, and forbidden otherwise' },
  ]);
});

other('a wrong kind is refused before the schema is checked', () => {
  const result = validateObject(dnsRecords, 'v1', { ...dnsRecord({ recordType: 'AAAA' }), kind: 'DNSRecords' });
  assert.equal(result.causes[0], { reason: 'FieldValueInvalid', field: 'kind', message: 'Invalid value: "DNSRecords": must be DNSRecord' });
  assert.not.ok(result.causes.some((c) => c.field === 'spec.recordType'));
});

other('every rule of the three CRDs is within the evaluator', () => {
  const all = [infrastructure, dnsRecords, dnses].flatMap((crd: Crd) => unsupportedRules(crd));
  assert.equal(all, []);
});

other.run();

const cel = suite('CEL evaluator');

cel('self.all(x, self.exists_one(y, x == y)) holds only for lists without repeats', () => {
  const rule = 'self.all(x, self.exists_one(y, x == y))';
  assert.is(evaluateCel(rule, { self: ['a', 'b', 'c'] }), true);
  assert.is(evaluateCel(rule, { self: ['a', 'b', 'a'] }), false);
  assert.is(evaluateCel(rule, { self: [] }), true);
});

cel('a ternary picks its branch and has() tests presence', () => {
  const rule = "has(self.type) && self.type == 'UUID' ? has(self.uuid) : !has(self.uuid)";
  assert.is(evaluateCel(rule, { self: { type: 'UUID', uuid: 'x' } }), true);
  assert.is(evaluateCel(rule, { self: { type: 'UUID' } }), false);
  assert.is(evaluateCel(rule, { self: { type: 'Name', uuid: 'x' } }), false);
  assert.is(evaluateCel(rule, { self: {} }), true);
});

cel('an error on one side of || or && gives way to a deciding other side', () => {
  assert.is(evaluateCel("self.missing == 'x' || true", { self: {} }), true);
  assert.is(evaluateCel("false && self.missing == 'x'", { self: {} }), false);
  assert.throws(() => evaluateCel("self.missing == 'x' || false", { self: {} }), (err: unknown) => err instanceof CelError && err.message === 'No such key: missing');
});

cel('transition rules compare with oldSelf', () => {
  assert.is(evaluateCel("oldSelf == '' || self == oldSelf", { self: 'ClusterHosted', oldSelf: 'PlatformDefault' }), false);
  assert.is(evaluateCel("oldSelf == '' || self == oldSelf", { self: 'ClusterHosted', oldSelf: '' }), true);
  assert.is(evaluateCel('self.all(x, x in oldSelf) && oldSelf.all(x, x in self)', { self: [1, 2], oldSelf: [2, 1] }), true);
});

cel('isIP and ip().family() follow Go netip and refuse zones, leading zeros and IPv4-mapped IPv6', () => {
  const family = (ip: string) => evaluateCel('isIP(self) ? ip(self).family() : 0', { self: ip });
  assert.equal(
    ['10.0.0.1', 'fd00::1', '::1.2.3.4', '1:2:3:4:5:6:7::', '010.0.0.1', '10.0.0.256', '::ffff:1.2.3.4', 'fe80::1%eth0', '00001::', '1::2:3:4:5:6:7:8', ''].map(family),
    [4, 6, 6, 6, 0, 0, 0, 0, 0, 0, 0],
  );
});

cel('isCIDR follows Go netip.ParsePrefix', () => {
  const cidr = (s: string) => evaluateCel('isCIDR(self)', { self: s });
  assert.equal(['10.0.0.0/8', '10.0.0.1/8', '::/0', '10.0.0.0/08', '10.0.0.0/33', '::ffff:1.2.3.4/96', '10.0.0.0'].map(cidr), [true, true, true, false, false, false, false]);
});

cel('url() exposes the scheme and escaped path of what Go accepts as a request URI', () => {
  assert.equal(evaluateCel('[url(self).getScheme(), url(self).getEscapedPath()]', { self: 'https://example.com/api/v1' }), ['https', '/api/v1']);
  assert.is(evaluateCel('isURL(self)', { self: 'example.com' }), false);
  assert.is(evaluateCel('isURL(self)', { self: 'https://example.com:port/' }), false);
});

cel('an expression CEL refuses (syntax, undeclared name, unknown function) is a CelError', () => {
  assert.throws(() => evaluateCel('self +', { self: 1 }), (err: unknown) => err instanceof CelError);
  assert.throws(() => evaluateCel('other == 1', { self: 1 }), (err: unknown) => err instanceof CelError);
  assert.throws(() => evaluateCel('self.frobnicate()', { self: [] }), (err: unknown) => err instanceof CelError);
});

cel('integers are CEL ints, so arithmetic and macros beyond the CRDs work as the apiserver has them', () => {
  assert.is(evaluateCel('self + 1 > 2', { self: 2 }), true);
  assert.equal(evaluateCel('self.map(x, x * 2)', { self: [1, 2] }), [2, 4]);
});

cel.run();

const WIDGET_CRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: widgets.example.com }
spec:
  group: example.com
  names: { kind: Widget, plural: widgets }
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: { type: string }
          kind: { type: string }
          metadata: { type: object }
          spec:
            type: object
            properties:
              name: { type: string }
              size: { type: integer }
            x-kubernetes-validations:
            - rule: "oldSelf.orValue(self).?name.orValue('') == self.?name.orValue('')"
              optionalOldSelf: true
              message: name is immutable
            - rule: "!has(self.size) || self.size <= 3"
              messageExpression: "has(self.name) && self.name.startsWith('x') ? 'x-widgets are small' : 'widgets are small'"
            - rule: has(self.name)
              reason: FieldValueRequired
              fieldPath: .name
              message: every widget has a name
`;

const rules = suite('rule options: optionalOldSelf, messageExpression, reason, fieldPath');
let widgetDir = '';
let widgets: Crd;
rules.before(() => {
  widgetDir = mkdtempSync(join(tmpdir(), 'crd-validate-'));
  const file = join(widgetDir, 'widgets.yaml');
  writeFileSync(file, WIDGET_CRD);
  widgets = loadCrd(file);
});
rules.after(() => rmSync(widgetDir, { recursive: true, force: true }));

function widget(spec: Record<string, unknown>) {
  return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'n' }, spec };
}

rules('an optionalOldSelf rule also runs on create, with no old value', () => {
  assert.equal(validateObject(widgets, 'v1', widget({ name: 'a' })).causes, []);
  assert.equal(validateObject(widgets, 'v1', widget({ name: 'b' }), widget({ name: 'a' })).causes, [
    { reason: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: "object": name is immutable' },
  ]);
});

rules('a messageExpression supplies the message', () => {
  const result = validateObject(widgets, 'v1', widget({ name: 'xl', size: 5 }));
  assert.equal(result.causes, [{ reason: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: "object": x-widgets are small' }]);
});

rules('reason and fieldPath shape the cause', () => {
  const result = validateObject(widgets, 'v1', widget({ size: 1 }));
  assert.equal(result.causes, [{ reason: 'FieldValueRequired', field: 'spec.name', message: 'Required value: every widget has a name' }]);
});

rules.run();
