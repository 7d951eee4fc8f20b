import { EXIT } from '../errors.js';
import { loadLocalInputs } from '../local-inputs.js';
import { loadTemplate, renderOnce } from '../render-job.js';
import { loggerFor, type CommandInputs } from './io.js';

/** The data model as JSON, for debugging: inputs, resolutions and the record set the template sees. */
export async function displayCommand(opts: CommandInputs): Promise<number> {
  const log = loggerFor(opts.io);
  const { raw, spec } = await loadLocalInputs(opts, log);
  const rendered = await renderOnce(spec, await loadTemplate(raw.template), { servers: raw.dnsServers });
  const view = {
    spec,
    resolutions: Object.fromEntries(rendered.resolutions),
    recordSet: rendered.recordSet,
    notServed: rendered.empty,
  };
  opts.io.stdout.write(`${JSON.stringify(view, null, 2)}\n`);
  return EXIT.ok;
}
