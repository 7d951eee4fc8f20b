import { EXIT } from '../errors.js';
import type { BuiltEndpoint } from '../model.js';
import type { ClusterFlags } from './cluster.js';
import { loggerFor, type CommandInputs } from './io.js';
import { gatherOnce } from './one-shot.js';
import { whyNotServed } from '../resolve/record-set.js';
import { templateNames } from '../render/template-blocks.js';

export interface DisplayOptions extends CommandInputs {
  readonly cluster?: ClusterFlags | undefined;
}

/**
 * An endpoint built for a DNSPolicy as a Kuadrant DNSRecord's `spec.endpoints` item (empty
 * fields left out, as Kuadrant writes them), so it diffs against a Kuadrant install; `source`
 * and `served` (how what lbdns serves differs) are lbdns's.
 */
function kuadrantForm({ endpoint: e, source, served }: BuiltEndpoint): object {
  return {
    dnsName: e.dnsName,
    recordType: e.recordType,
    targets: e.targets,
    recordTTL: e.recordTTL,
    ...(e.setIdentifier === '' ? {} : { setIdentifier: e.setIdentifier }),
    ...(e.providerSpecific.length === 0 ? {} : { providerSpecific: e.providerSpecific }),
    source,
    ...(served === undefined ? {} : { served }),
  };
}

/** The data model as JSON, for debugging: inputs, resolutions and the record set the template sees. */
export async function displayCommand(opts: DisplayOptions): Promise<number> {
  const log = loggerFor(opts.io);
  const state = await gatherOnce(opts, opts.cluster, log);
  const view = {
    spec: state.spec,
    resolutions: Object.fromEntries(state.resolutions),
    recordSet: { ...state.recordSet, names: templateNames(state.recordSet.names) },
    notServed: whyNotServed(state.spec, state),
    notes: state.notes,
    unmanaged: state.unmanaged,
    withheld: state.withheld,
    ...(state.dnsType === undefined ? {} : { dnsType: state.dnsType }),
    ...(state.apiIntRollout === undefined ? {} : { apiIntRollout: state.apiIntRollout }),
    ...(state.spec.gateway ? { gateway: { endpoints: state.spec.gateway.owners.flatMap((o) => o.built?.again(o.built.host) ?? []).map(kuadrantForm), served: state.gateway.served, refused: state.gateway.refused } } : {}),
  };
  opts.io.stdout.write(`${JSON.stringify(view, null, 2)}\n`);
  return EXIT.ok;
}
