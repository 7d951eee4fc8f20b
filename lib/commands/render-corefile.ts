import { EXIT } from '../errors.js';
import { renderCorefile } from '../render/corefile.js';
import { emitCorefile, loadTemplate } from '../sinks/corefile-output.js';
import type { ClusterFlags } from './cluster.js';
import { loggerFor, type CommandInputs } from './io.js';
import { gatherOnce } from './one-shot.js';

export interface RenderCorefileOptions extends CommandInputs {
  readonly diff: boolean;
  /** Read the cluster; absent: flags and files only. */
  readonly cluster?: ClusterFlags | undefined;
}

export async function renderCorefileCommand(opts: RenderCorefileOptions): Promise<number> {
  const log = loggerFor(opts.io);
  const state = await gatherOnce(opts, opts.cluster, log);
  const template = await loadTemplate(state.raw.template);
  const text = renderCorefile(state.recordSet, template.text, template.source);
  const emitted = await emitCorefile(text, state.raw.out, opts.diff, opts.io.stdout);
  if (emitted.kind === 'file') log.info(emitted.written ? 'Corefile written' : 'Corefile unchanged', { path: emitted.path });
  return EXIT.ok;
}
