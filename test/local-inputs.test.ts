import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { lbResolvers } from '../lib/inputs/local-inputs.js';
import type { ClusterSpec } from '../lib/model.js';

function spec(upstreams: readonly string[]): ClusterSpec {
  return {
    domain: 'c1.example.com',
    role: 'control-plane',
    lbs: { api: [], 'api-int': [], ingress: [] },
    extraRecords: [],
    nodes: [],
    upstreams,
    ttl: 60,
    reload: { intervalSeconds: 2, jitterSeconds: 1 },
  };
}

test('LB hostnames are resolved through --dns-server when it is given, whatever the upstreams', () => {
  assert.equal(lbResolvers({ dnsServers: ['127.0.0.1:5353'] }, spec(['10.0.0.2'])), ['127.0.0.1:5353']);
});

test('without --dns-server, LB hostnames are resolved through the upstreams the Corefile forwards to', () => {
  assert.equal(lbResolvers({ upstreams: ['10.0.0.2', '10.0.0.3'] }, spec(['10.0.0.2', '10.0.0.3'])), ['10.0.0.2', '10.0.0.3']);
});

test('with neither --dns-server nor any upstream, LB hostnames are resolved through the system resolvers', () => {
  assert.is(lbResolvers({}, spec([])), undefined);
});

test.run();
