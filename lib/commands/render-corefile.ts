import { ConfigError, EXIT, isApiUnreachable, ValidationError } from '../errors.js';
import { writeDnsmasq } from '../sinks/dnsmasq-output.js';
import { loadRawConfig } from '../inputs/local-inputs.js';
import type { Logger } from '../runtime/log.js';
import { renderCorefile } from '../render/corefile.js';
import { checkCorefileOutputs, checkLocalOutputs, emitCorefile, keepCorefile, type LoadedTemplate } from '../sinks/corefile-output.js';
import type { RawConfig } from '../inputs/config.js';
import type { ClusterFlags } from './cluster.js';
import { inputFiles, loggerFor, type CommandInputs } from './io.js';
import { gatherOnce, type OneShotState } from './one-shot.js';
import { renderZones } from '../render/zone-file.js';
import { weightFileDiff, weightFilePath } from '../sinks/weight-file-output.js';
import { zoneFileDiff, zoneFilePaths } from '../sinks/zone-file-output.js';
import type { RecordSet } from '../model.js';

const IF_UNREACHABLE = ['fail', 'keep'] as const;
type IfUnreachable = (typeof IF_UNREACHABLE)[number];

const DNSMASQ_OUT_NEEDS_FILE = '--dnsmasq-out writes the drop-in beside a Corefile written to a file: give --out FILE, without --diff';

export interface RenderCorefileOptions extends CommandInputs {
  readonly diff: boolean;
  /** --dnsmasq-out: the node dnsmasq's drop-in, written after the Corefile from the same record set. */
  readonly dnsmasqOut?: string | undefined;
  /** `keep`: when the API server cannot be read, a Corefile at --out that passes the check stays as it is (exit 0). */
  readonly ifUnreachable?: string | undefined;
  /** Read the cluster; absent: flags and files only. */
  readonly cluster?: ClusterFlags | undefined;
}

function parseIfUnreachable(value: string | undefined, cluster: ClusterFlags | undefined): IfUnreachable {
  if (value === undefined) return 'fail';
  if (!(IF_UNREACHABLE as readonly string[]).includes(value)) throw new ValidationError('--if-unreachable', value, 'is not keep or fail');
  if (cluster === undefined) throw new ValidationError('--if-unreachable', value, 'applies only when reading a cluster', 'give a kubeconfig, or drop it');
  return value as IfUnreachable;
}

/**
 * Gathers the state, or with `keep`, when the API server cannot be read within --wait-timeout,
 * leaves the Corefile at --out as it is if it passes the check: after a full cluster shutdown
 * the node's CoreDNS must come back with the last good file to let the API server be found.
 */
async function gatherOrKeep(opts: RenderCorefileOptions, log: Logger): Promise<(OneShotState & { readonly template: LoadedTemplate }) | { readonly kept: string; readonly since: Date }> {
  const ifUnreachable = parseIfUnreachable(opts.ifUnreachable, opts.cluster);
  let template: LoadedTemplate | undefined;
  const check = async (raw: RawConfig): Promise<void> => {
    const out = raw.out === '-' ? undefined : raw.out;
    if (opts.dnsmasqOut !== undefined && (out === undefined || opts.diff)) throw new ConfigError(DNSMASQ_OUT_NEEDS_FILE);
    template = await checkLocalOutputs(raw, opts.diff ? undefined : out, opts.dnsmasqOut, inputFiles(opts, raw, opts.cluster));
  };
  try {
    const state = await gatherOnce(opts, opts.cluster, log, { check });
    return { ...state, template: template as LoadedTemplate };
  } catch (err) {
    if (ifUnreachable !== 'keep' || !isApiUnreachable(err)) throw err;
    const { out } = await loadRawConfig(opts, log);
    if (out === undefined || out === '-') throw err;
    const { since } = await keepCorefile(out, err as Error);
    return { kept: out, since };
  }
}

async function gatewayFilesDiff(recordSet: RecordSet, weightFile: string): Promise<string> {
  const diffs = [await weightFileDiff(weightFile, recordSet.weights ?? [])];
  for (const [zone, records] of renderZones(recordSet)) {
    const path = recordSet.zoneFiles?.get(zone);
    if (path !== undefined) diffs.push(await zoneFileDiff(path, zone, records));
  }
  return diffs.join('');
}

export async function renderCorefileCommand(opts: RenderCorefileOptions): Promise<number> {
  const log = loggerFor(opts.io);
  const gathered = await gatherOrKeep(opts, log);
  if ('kept' in gathered) {
    log.warn('the API server is unreachable; the Corefile on disk is kept and served as it is (--if-unreachable=keep)', { path: gathered.kept, servedSince: gathered.since.toISOString() });
    return EXIT.ok;
  }
  const state = gathered;
  const { template } = gathered;
  const out = state.raw.out;
  const gateway = state.spec.gateway && out !== undefined && out !== '-' ? { weightFile: weightFilePath(out), zoneFiles: zoneFilePaths(out, state.spec.gateway.zones) } : undefined;
  if (out !== undefined && out !== '-' && !opts.diff) await checkCorefileOutputs(out, gateway, opts.dnsmasqOut);
  const recordSet = gateway ? { ...state.recordSet, ...gateway } : state.recordSet;
  const text = renderCorefile(recordSet, template.text, template.source);
  // The files the Corefile names change without it (a Gateway's address): --diff shows them too.
  const dataDiff = gateway && opts.diff ? await gatewayFilesDiff(recordSet, gateway.weightFile) : '';
  opts.io.stdout.write(dataDiff);
  const emitted = await emitCorefile(text, out, opts.diff, opts.io.stdout, recordSet);
  if (emitted.kind === 'file') log.info(emitted.written ? 'Corefile written' : 'Corefile unchanged', { path: emitted.path });
  if (opts.dnsmasqOut !== undefined) {
    // After the Corefile: dnsmasq sends the cluster's names to a CoreDNS that must already serve them.
    const written = await writeDnsmasq(opts.dnsmasqOut, state.recordSet, state.withheld, '--dnsmasq-out');
    log.info(written.dropIn.written ? 'dnsmasq drop-in written' : 'dnsmasq drop-in unchanged', { path: written.dropIn.path });
    if (written.hosts.written) log.info("dnsmasq's api-int hosts file written", { path: written.hosts.path });
  }
  // As diff(1) and check-dns: a script can ask whether the Corefile would change.
  if (emitted.kind === 'diff' && (emitted.diff !== '' || dataDiff !== '')) return EXIT.mismatch;
  return EXIT.ok;
}
