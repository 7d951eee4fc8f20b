import { EXIT } from '../errors.js';
import type { ClusterFlags } from './cluster.js';
import { loggerFor, type CommandInputs } from './io.js';
import { gatherOnce } from './one-shot.js';

export interface DisplayOptions extends CommandInputs {
  readonly cluster?: ClusterFlags | undefined;
}

/** The data model as JSON, for debugging: inputs, resolutions and the record set the template sees. */
export async function displayCommand(opts: DisplayOptions): Promise<number> {
  const log = loggerFor(opts.io);
  const state = await gatherOnce(opts, opts.cluster, log);
  const view = {
    spec: state.spec,
    resolutions: Object.fromEntries(state.resolutions),
    recordSet: state.recordSet,
    notServed: state.empty,
    unmanaged: state.unmanaged,
    withheld: state.withheld,
    ...(state.dnsType === undefined ? {} : { dnsType: state.dnsType }),
    ...(state.spec.gateway ? { gateway: { served: state.gateway.served, refused: state.gateway.refused } } : {}),
  };
  opts.io.stdout.write(`${JSON.stringify(view, null, 2)}\n`);
  return EXIT.ok;
}
