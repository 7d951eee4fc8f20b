import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ClusterSpec, Endpoint } from '../lib/model.js';
import { LOGGED_CHANGES, recordChanges } from '../lib/resolve/record-changes.js';
import { buildRecordSet } from '../lib/resolve/record-set.js';

const D = 'c1.example.com';
const ip = (value: string): Endpoint => ({ kind: 'ip', ip: value });

function recordSet(ingress: string, nodes: number, prefix = 'node', extra: readonly [string, string][] = []) {
  const spec: ClusterSpec = {
    domain: D,
    role: 'control-plane',
    lbs: { api: [ip('10.0.0.10')], 'api-int': [ip('10.0.0.20')], ingress: [ip(ingress)] },
    extraRecords: extra.map(([name, address]) => ({ name, targets: [ip(address)], source: 'dnsrecord/x/y' })),
    nodes: Array.from({ length: nodes }, (_, i) => ({ name: `${prefix}-${String(i).padStart(3, '0')}`, ips: [`10.1.${Math.floor(i / 250)}.${(i % 250) + 1}`] })),
    upstreams: ['10.0.0.2'],
    ttl: 60,
    reload: { intervalSeconds: 2, jitterSeconds: 1 },
  };
  return buildRecordSet(spec, new Map()).recordSet;
}

test('a changed address is logged with the name, what it was and what it is', () => {
  assert.equal(recordChanges(recordSet('10.0.1.30', 1), recordSet('10.0.1.99', 1)), {
    changes: [{ name: `*.apps.${D}`, from: ['10.0.1.30'], to: ['10.0.1.99'] }],
  });
});

test('the first Corefile logs every name as new, in name order', () => {
  const { changes } = recordChanges(undefined, recordSet('10.0.1.30', 2));
  assert.equal(changes.map((c) => c.name), [`*.apps.${D}`, `api-int.${D}`, `api.${D}`, `node-000.${D}`, `node-001.${D}`]);
  assert.ok(changes.every((c) => c.from.length === 0));
});

test(`more than ${LOGGED_CHANGES} changes log the first ${LOGGED_CHANGES} and how many more`, () => {
  const log = recordChanges(undefined, recordSet('10.0.1.30', 5000));
  assert.is(log.changes.length, LOGGED_CHANGES);
  assert.is(log.moreChanges, 5003 - LOGGED_CHANGES);
  assert.ok(JSON.stringify(log).length < 4000, 'one short log line');
});

test('an LB change is logged even when more node changes than the cut sort before it', () => {
  const before = recordSet('10.0.1.30', 0, 'a');
  const after = recordSet('10.0.1.99', 50, 'a');
  const { changes, moreChanges } = recordChanges(before, after);
  assert.equal(changes[0], { name: `*.apps.${D}`, from: ['10.0.1.30'], to: ['10.0.1.99'] });
  assert.is(changes[1]?.name, `a-000.${D}`);
  assert.is(moreChanges, 51 - LOGGED_CHANGES);
});

test('between kept names, a name gone, a name new and a name changed are each logged once', () => {
  const before = recordSet('10.0.1.30', 0, 'node', [[`a.apps.${D}`, '10.2.0.1'], [`c.apps.${D}`, '10.2.0.3'], [`deep.c.apps.${D}`, '10.2.0.4']]);
  const after = recordSet('10.0.1.30', 0, 'node', [[`b.apps.${D}`, '10.2.0.2'], [`c.apps.${D}`, '10.2.0.9'], [`deep.c.apps.${D}`, '10.2.0.4']]);
  assert.equal(recordChanges(before, after).changes, [
    { name: `a.apps.${D}`, from: ['10.2.0.1'], to: [] },
    { name: `b.apps.${D}`, from: [], to: ['10.2.0.2'] },
    { name: `c.apps.${D}`, from: ['10.2.0.3'], to: ['10.2.0.9'] },
  ]);
});

test.run();
