/**
 * The render's parts on the gateway-scale record set (10,000 hosts, 25,003 names), each timed
 * on its own in one process: the zone file's records from the record set, and the Corefile
 * check of the rendered text (which no longer holds the Gateway names).
 * `node --import tsx bench/render-parts.ts`.
 */
import { DEFAULTS } from '../lib/model.js';
import { performance } from 'node:perf_hooks';
import { checkCorefile } from '../lib/render/corefile-check.js';
import { renderCorefile } from '../lib/render/corefile.js';
import { renderZones } from '../lib/render/zone-file.js';
import { builtinTemplate } from '../lib/render/templates.js';
import { buildRecordSet } from '../lib/resolve/record-set.js';
import { GatewayInputs } from '../lib/sources/gateway-sources.js';
import { KUBE_SYSTEM, ZONE } from '../test/support/gateway-fixture.js';
import { BASE, objects } from './gateway-scale.js';

const RUNS = 30;
const { gateways, policies } = objects();
const inputs = new GatewayInputs([ZONE], { warn: () => undefined, flush: () => undefined });
inputs.set('cluster-id', [KUBE_SYSTEM]);
inputs.set('gateways', gateways);
inputs.set('dnspolicies', policies);
const owners = inputs.contribution().gatewayOwners ?? [];
const { recordSet } = buildRecordSet({ ...BASE, gateway: { zones: [ZONE], geoCode: undefined, ttls: DEFAULTS.gatewayTtls, owners } }, new Map());
const served = { ...recordSet, zoneFiles: new Map([[ZONE, `/var/lib/lbdns/${ZONE}.zone`]]) };
const text = renderCorefile(served, builtinTemplate(), 'builtin');

function timed(what: string, run: (i: number) => unknown): void {
  const ms = Array.from({ length: RUNS }, (_, i) => {
    const started = performance.now();
    run(i);
    return performance.now() - started;
  }).sort((a, b) => a - b);
  console.log(`${what}: min ${(ms[0] as number).toFixed(1)} ms, p50 ${(ms[RUNS >> 1] as number).toFixed(1)} ms (${RUNS} runs)`);
}

timed(`zone file records, ${recordSet.names.length} names`, () => renderZones(served));
timed(`Corefile check, ${(text.length / 1e6).toFixed(2)} MB`, () => checkCorefile(text));
