import { stat } from 'node:fs/promises';
import { OUTPUT_FILE_MAX_BYTES, readInputFile, readInputFileIfPresent } from '../inputs/admin-file.js';
import { checkDistinctOutputs, checkNotInputs, checkOutputPath, writeFileAtomic, type Output } from './atomic-write.js';
import { checkDnsmasqOutputs, dnsmasqOutputs } from './dnsmasq-output.js';
import { checkDnsmasqListen } from '../render/dnsmasq.js';
import { listenOf } from '../inputs/spec.js';
import type { RawConfig } from '../inputs/config.js';
import { DEFAULTS } from '../model.js';
import { ConfigError, MissingDataError, quote } from '../errors.js';
import { checkCorefile } from '../render/corefile-check.js';
import { builtinTemplate } from '../render/templates.js';
import { renderZones } from '../render/zone-file.js';
import type { RecordSet } from '../model.js';
import { writeWeightFile } from './weight-file-output.js';
import { writeZoneFiles } from './zone-file-output.js';

export interface LoadedTemplate {
  readonly text: string;
  /** For messages: the file, or `builtin`. */
  readonly source: string;
}

async function loadTemplate(path: string | undefined): Promise<LoadedTemplate> {
  if (path === undefined) return { text: builtinTemplate(), source: 'builtin' };
  return { text: await readInputFile(path, { flag: '--template', code: true }), source: path };
}

/**
 * What a Corefile command judges from flags and files alone, before the cluster or DNS is
 * asked, so a bad one is exit 2 at once rather than after --wait-timeout: the template read,
 * `out` (a file to write) and the dnsmasq drop-in's paths, and CoreDNS's port beside the drop-in.
 */
export async function checkLocalOutputs(raw: RawConfig, out: string | undefined, dnsmasqOut: string | undefined, inputs: readonly Output[]): Promise<LoadedTemplate> {
  const template = await loadTemplate(raw.template);
  if (out !== undefined) await checkOutputPath(out, '--out');
  if (dnsmasqOut !== undefined) {
    checkDnsmasqListen(listenOf(raw).listen ?? DEFAULTS.listen);
    await checkDnsmasqOutputs(dnsmasqOut, '--dnsmasq-out');
  }
  await checkNotInputs([...(out === undefined ? [] : [{ what: '--out', path: out }]), ...(dnsmasqOut === undefined ? [] : dnsmasqOutputs(dnsmasqOut, '--dnsmasq-out'))], inputs);
  return template;
}

/** Every file and directory a Corefile write puts in place, each a path of its own, or a ConfigError (exit 2) before any is written. */
export async function checkCorefileOutputs(out: string, gateway: { readonly weightFile: string; readonly zoneFiles: ReadonlyMap<string, string> } | undefined, dnsmasqOut: string | undefined): Promise<void> {
  if (gateway !== undefined) for (const path of [gateway.weightFile, ...gateway.zoneFiles.values()]) await checkOutputPath(path, `the Gateway file beside --out`);
  await checkDistinctOutputs([
    { what: '--out', path: out },
    ...(gateway === undefined ? [] : [{ what: 'the Gateway weight file', path: gateway.weightFile }, ...[...gateway.zoneFiles].map(([zone, path]) => ({ what: `the zone file of ${zone}`, path }))]),
    ...(dnsmasqOut === undefined ? [] : dnsmasqOutputs(dnsmasqOut, '--dnsmasq-out')),
  ]);
}

/**
 * `--if-unreachable=keep`: the Corefile already at `out`, left as it is, when it passes the
 * structural check: CoreDNS goes on serving the last good file while the API is away. A file
 * that fails the check is never passed off as last known good; no file, no keeping.
 */
export async function keepCorefile(out: string, unreachable: Error): Promise<{ readonly since: Date }> {
  // Read as an input: a FIFO or a device at --out is refused rather than waited on or read whole.
  const text = await readInputFileIfPresent(out, { flag: '--out', maxBytes: OUTPUT_FILE_MAX_BYTES });
  if (text === undefined) throw unreachable;
  const since = (await stat(out)).mtime;
  try {
    checkCorefile(text);
  } catch (err) {
    throw new MissingDataError(`the API server is unreachable (${unreachable.message}) and the Corefile at ${quote(out)} fails the structural check, so it is not kept as last known good: ${(err as Error).message}`);
  }
  return { since };
}

export type Emitted = { readonly kind: 'stdout' } | { readonly kind: 'file'; readonly path: string; readonly written: boolean } | { readonly kind: 'diff'; readonly diff: string };

/** `out` undefined or '-' → stdout; `diff` → what would change on disk, nothing written; a file → it and the files it names (writeCorefileFiles). */
export async function emitCorefile(text: string, out: string | undefined, diff: boolean, stdout: { write(s: string): unknown }, recordSet: RecordSet): Promise<Emitted> {
  if (diff) {
    if (out === undefined || out === '-') throw new ConfigError('--diff compares with the file on disk: give --out FILE');
    const current = (await readInputFileIfPresent(out, { flag: '--out', maxBytes: OUTPUT_FILE_MAX_BYTES })) ?? '';
    // Loaded here: only --diff needs the diff package.
    const { unifiedDiff } = await import('../render/diff.js');
    const d = unifiedDiff(current, text, out, `${out} (rendered)`);
    stdout.write(d);
    return { kind: 'diff', diff: d };
  }
  if (out === undefined || out === '-') {
    stdout.write(text);
    return { kind: 'stdout' };
  }
  const { corefile: written } = await writeCorefileFiles(out, text, recordSet, renderZones(recordSet));
  return { kind: 'file', path: out, written };
}

/**
 * The Corefile at `out` and, with Gateway DNS, the weight file and zone files it names, these
 * first: CoreDNS must find each whole when it reads a Corefile naming it. Each is written only
 * when its bytes change (writeFileAtomic, writeZoneFile), so a file changed behind lbdns's back
 * is put right and an unchanged one left alone; `data` says whether a named file was.
 */
export async function writeCorefileFiles(out: string, text: string, recordSet: RecordSet, zones: ReadonlyMap<string, string>): Promise<{ readonly corefile: boolean; readonly data: boolean }> {
  let data = false;
  if (recordSet.weightFile !== undefined) {
    const weights = await writeWeightFile(recordSet.weightFile, recordSet.weights ?? []);
    data = (await writeZoneFiles(recordSet, zones)).some((w) => w.written) || weights.written;
  }
  const { written } = await writeFileAtomic(out, text);
  return { corefile: written, data };
}
