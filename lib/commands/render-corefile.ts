import { EXIT } from '../errors.js';
import { loadLocalInputs } from '../local-inputs.js';
import { requireLbs } from '../spec.js';
import { emitCorefile, loadTemplate, renderOnce } from '../render-job.js';
import { loggerFor, type CommandInputs } from './io.js';

export interface RenderCorefileOptions extends CommandInputs {
  readonly diff: boolean;
}

export async function renderCorefileCommand(opts: RenderCorefileOptions): Promise<number> {
  const log = loggerFor(opts.io);
  const { raw, spec } = await loadLocalInputs(opts, log);
  requireLbs(spec);
  const template = await loadTemplate(raw.template);
  const rendered = await renderOnce(spec, template, { servers: raw.dnsServers });
  const emitted = await emitCorefile(rendered.text, raw.out, opts.diff, opts.io.stdout);
  if (emitted.kind === 'file') log.info(emitted.written ? 'Corefile written' : 'Corefile unchanged', { path: emitted.path });
  return EXIT.ok;
}
