/**
 * The heap each stage keeps for gateway-scale's 10,000 hosts, in a process of its own so that
 * nothing is kept from earlier runs: live heap after full collections, before and after each
 * stage. gateway-scale runs it (`node --expose-gc --import tsx bench/gateway-heap.ts`) and
 * reads the JSON it prints.
 */
import { DEFAULTS } from '../lib/model.js';
import { renderCorefile } from '../lib/render/corefile.js';
import { builtinTemplate } from '../lib/render/templates.js';
import { acceptGatewayNames } from '../lib/resolve/gateway-names.js';
import { buildRecordSet } from '../lib/resolve/record-set.js';
import { GatewayInputs } from '../lib/sources/gateway-sources.js';
import { KUBE_SYSTEM, ZONE } from '../test/support/gateway-fixture.js';
import { BASE, objects } from './gateway-scale.js';

const maybeGc = (globalThis as { gc?: () => void }).gc;
if (maybeGc === undefined) throw new Error('run with node --expose-gc');
const gc: () => void = maybeGc;
const live = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

// Kept in variables to the end: each stage's figure is what it adds while the others live.
let before = live();
const added = (): number => {
  const now = live();
  const delta = now - before;
  before = now;
  return delta;
};
const { gateways, policies } = objects();
const apiObjects = added();
const inputs = new GatewayInputs([ZONE], { warn: () => undefined, flush: () => undefined });
inputs.set('cluster-id', [KUBE_SYSTEM]);
inputs.set('gateways', gateways);
inputs.set('dnspolicies', policies);
const owners = inputs.contribution().gatewayOwners ?? [];
const sources = added();
const spec = { ...BASE, gateway: { zones: [ZONE], geoCode: undefined, ttls: DEFAULTS.gatewayTtls, owners } };
const accepted = acceptGatewayNames(spec);
const claims = added();
const { recordSet } = buildRecordSet(spec, new Map());
const records = added();
const text = renderCorefile({ ...recordSet, zoneFiles: new Map([[ZONE, `/var/lib/lbdns/${ZONE}.zone`]]) }, builtinTemplate(), 'builtin');
const render = added();
process.stdout.write(`${JSON.stringify({ apiObjects, sources, claims, records, render, kept: [owners.length, accepted.byName.size, recordSet.names.length, text.length] })}\n`);
