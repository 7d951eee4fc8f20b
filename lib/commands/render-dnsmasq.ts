import { EXIT } from '../errors.js';
import { renderDnsmasq } from '../render/dnsmasq.js';
import { writeFileAtomic } from '../sinks/atomic-write.js';
import type { ClusterFlags } from './cluster.js';
import { loggerFor, type CommandInputs } from './io.js';
import { gatherOnce } from './one-shot.js';

export interface RenderDnsmasqOptions extends CommandInputs {
  /** The drop-in's path; absent or '-': stdout. */
  readonly out: string | undefined;
  readonly cluster?: ClusterFlags | undefined;
}

/** The dnsmasq drop-in from the same inputs as the Corefile, written atomically and only when it changed. */
export async function renderDnsmasqCommand(opts: RenderDnsmasqOptions): Promise<number> {
  const log = loggerFor(opts.io);
  const state = await gatherOnce(opts, opts.cluster, log);
  const text = renderDnsmasq(state.recordSet);
  if (opts.out === undefined || opts.out === '-') {
    opts.io.stdout.write(text);
    return EXIT.ok;
  }
  const { written, path } = await writeFileAtomic(opts.out, text);
  log.info(written ? 'dnsmasq drop-in written' : 'dnsmasq drop-in unchanged', { path });
  return EXIT.ok;
}
