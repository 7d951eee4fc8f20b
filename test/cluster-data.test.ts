/** One truth per LB: the sources that name an LB are served; a published copy only for an LB nothing else names. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { lbDisagreements, mergeContributions } from '../lib/sources/cluster-data.js';
import type { Endpoint } from '../lib/model.js';

const ip = (ip: string): Endpoint => ({ kind: 'ip', ip });
const host = (hostname: string): Endpoint => ({ kind: 'hostname', hostname });
const NOTHING_LOCAL = { lbs: new Set<never>(), nodes: false };

test('an LB a source names is served from that source alone, the published copy kept aside', () => {
  const data = mergeContributions([{ lbs: { 'api-int': [host('int.elb.example.net')] } }, { publishedLbs: { 'api-int': [ip('10.9.9.9')] } }]);
  assert.equal(data.lbs['api-int'], [host('int.elb.example.net')]);
  assert.equal(data.shadowed?.['api-int'], [ip('10.9.9.9')]);
});

test('an LB no source names is served from the published copy', () => {
  const data = mergeContributions([{ lbs: { ingress: [ip('10.0.1.30')] } }, { publishedLbs: { 'api-int': [ip('10.9.9.9')], api: [] } }]);
  assert.equal(data.lbs['api-int'], [ip('10.9.9.9')]);
  assert.equal(data.shadowed, {});
  assert.equal(data.publishedOnly, ['api-int']);
});

test('a published copy that differs from the served addresses is a disagreement; the same set in another order is not', () => {
  const data = mergeContributions([{ lbs: { 'api-int': [host('int.elb.example.net')] } }, { publishedLbs: { 'api-int': [ip('10.0.0.2'), ip('10.0.0.1')] } }]);
  assert.equal(lbDisagreements(data, NOTHING_LOCAL, () => ['10.0.0.1', '10.0.0.2']), []);
  assert.equal(lbDisagreements(data, NOTHING_LOCAL, () => ['10.0.0.1', '10.0.0.3']), [{ lb: 'api-int', served: ['10.0.0.1', '10.0.0.3'], published: ['10.0.0.1', '10.0.0.2'] }]);
});

test('while the served addresses are unknown (a host name not yet resolved) nothing is called a disagreement', () => {
  const data = mergeContributions([{ lbs: { 'api-int': [host('int.elb.example.net')] } }, { publishedLbs: { 'api-int': [ip('10.0.0.1')] } }]);
  assert.equal(lbDisagreements(data, NOTHING_LOCAL, () => []), []);
});

test('an LB a flag gives is compared with the published copy too', () => {
  const data = mergeContributions([{ publishedLbs: { api: [ip('10.0.0.1')] } }]);
  assert.equal(lbDisagreements(data, { lbs: new Set(['api'] as const), nodes: false }, () => ['10.0.0.7']), [{ lb: 'api', served: ['10.0.0.7'], published: ['10.0.0.1'] }]);
});

test.run();
