import { EXIT } from '../errors.js';
import { ConfigError } from '../errors.js';
import { checkDnsmasqOutputs, dnsmasqOutputs, writeDnsmasq } from '../sinks/dnsmasq-output.js';
import { checkNotInputs } from '../sinks/atomic-write.js';
import type { RawConfig } from '../inputs/config.js';
import { checkDnsmasqListen } from '../render/dnsmasq.js';
import { listenOf } from '../inputs/spec.js';
import { DEFAULTS } from '../model.js';
import type { ClusterFlags } from './cluster.js';
import { inputFiles, loggerFor, type CommandInputs } from './io.js';
import { gatherOnce } from './one-shot.js';

export interface RenderDnsmasqOptions extends CommandInputs {
  /** The drop-in's path; its hosts directory goes beside it. */
  readonly out: string | undefined;
  readonly cluster?: ClusterFlags | undefined;
}

/** The dnsmasq drop-in and its api-int hosts file, from the same inputs as the Corefile, each written atomically and only when it changed. */
export async function renderDnsmasqCommand(opts: RenderDnsmasqOptions): Promise<number> {
  const log = loggerFor(opts.io);
  if (opts.out === undefined || opts.out === '-') throw new ConfigError('--out is required: the drop-in names the hosts directory lbdns keeps beside it, for api-int');
  await checkDnsmasqOutputs(opts.out, '--out');
  // Before the cluster or DNS is asked: CoreDNS's port is the flags' alone.
  const out = opts.out;
  const check = async (raw: RawConfig): Promise<void> => {
    checkDnsmasqListen(listenOf(raw).listen ?? DEFAULTS.listen);
    await checkNotInputs(dnsmasqOutputs(out, '--out'), inputFiles(opts, raw, opts.cluster));
  };
  const state = await gatherOnce(opts, opts.cluster, log, { check, dnsmasqOut: opts.out });
  const { dropIn, hosts } = await writeDnsmasq(opts.out, state.recordSet, state.withheld, '--out');
  log.info(dropIn.written ? 'dnsmasq drop-in written' : 'dnsmasq drop-in unchanged', { path: dropIn.path, hosts: hosts.path });
  return EXIT.ok;
}
