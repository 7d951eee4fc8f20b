import { isPlainPath } from '../grammar/validate.js';
import { lstat, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { RecordSet } from '../model.js';
import { renderDnsmasq, renderDnsmasqHosts } from '../render/dnsmasq.js';
import { checkOutputPath, writeFileAtomic, type Output, type WriteResult } from './atomic-write.js';
import { ConfigError, quote } from '../errors.js';
import { canonicalIp } from '../grammar/ip.js';
import { OUTPUT_FILE_MAX_BYTES, readInputFileIfPresent } from '../inputs/admin-file.js';

/**
 * The directory the drop-in names as its `hostsdir`, beside it: `lbdns.conf` → `lbdns.hosts`.
 * Named in the drop-in by its absolute path, on a line of its own: `flag` is refused unless
 * the drop-in's path is absolute and plain.
 */
export function dnsmasqHostsDir(dropIn: string, flag: string): string {
  if (!dropIn.startsWith('/') || !isPlainPath(dropIn)) {
    throw new ConfigError(`${flag} ${quote(dropIn)}: the drop-in names the directory beside it that holds api-int's hosts file by its absolute path, so ${flag} must be an absolute path of letters, digits, '.', '_', '-' and '/'`);
  }
  return join(dirname(dropIn), `${basename(dropIn).replace(/\.conf$/, '')}.hosts`);
}

const HOSTS_FILE = 'api-int';

/** What writeDnsmasq writes: the drop-in, the hosts directory beside it, and the directory the hosts file is made in. */
export function dnsmasqOutputs(dropIn: string, flag: string): Output[] {
  const dir = dnsmasqHostsDir(dropIn, flag);
  return [
    { what: flag, path: dropIn },
    { what: `${flag}'s hosts directory`, path: dir },
    { what: `${flag}'s staging directory`, path: stagingDir(dir) },
  ];
}

const stagingDir = (dir: string): string => `${dir}.staging`;

/** The drop-in a file or none, and its hosts and staging directories directories or none, with a hosts file that is a file: else a ConfigError (exit 2) before anything is written. */
export async function checkDnsmasqOutputs(dropIn: string, flag: string): Promise<void> {
  await checkOutputPath(dropIn, flag);
  const dir = dnsmasqHostsDir(dropIn, flag);
  for (const [what, path, kind] of [[`${flag}'s hosts directory`, dir, 'directory'], [`${flag}'s staging directory`, stagingDir(dir), 'directory'], [`${flag}'s api-int hosts file`, join(dir, HOSTS_FILE), 'file']] as const) {
    const info = await stat(path).catch(() => null);
    if (info === null && (await lstat(path).catch(() => null))?.isSymbolicLink() === true) {
      throw new ConfigError(`${what} ${quote(path)} is a symlink whose target does not exist or loops; nothing was written. Remove it, or give ${flag} another path`);
    }
    if (info !== null && !(kind === 'directory' ? info.isDirectory() : info.isFile())) {
      throw new ConfigError(`${what} ${quote(path)} exists and is not a ${kind}; nothing was written. Remove it, or give ${flag} another path`);
    }
  }
}

/**
 * Puts the hosts file in place by a rename into the watched directory, only when it changed:
 * dnsmasq reads every file of a `hostsdir`, so the file is made whole in a directory of its
 * own beside it (a directory, which dnsmasq's conf-dir skips), then renamed in.
 */
async function writeHostsFile(dir: string, content: string): Promise<WriteResult> {
  const target = join(dir, HOSTS_FILE);
  const current = await readFile(target, 'utf8').catch(() => undefined);
  if (current === content) return { written: false, path: target };
  const staging = stagingDir(dir);
  await Promise.all([mkdir(dir, { recursive: true }), mkdir(staging, { recursive: true })]);
  // Made anew: through a symlink left there, the write and the rename would take its target along.
  await rm(join(staging, HOSTS_FILE), { force: true });
  const { path: made } = await writeFileAtomic(join(staging, HOSTS_FILE), content);
  await rename(made, target);
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { written: true, path: target };
}

/**
 * The addresses the hosts file beside `dropIn` answers `host` with: what the node's dnsmasq
 * served before this process, read back as the Corefile's templates are. None when there is
 * no such file yet, or the drop-in does not name its directory (api-int withheld).
 */
export async function dnsmasqServedFor(dropIn: string, flag: string, host: string): Promise<string[]> {
  const dir = dnsmasqHostsDir(dropIn, flag);
  const conf = (await readInputFileIfPresent(dropIn, { flag, maxBytes: OUTPUT_FILE_MAX_BYTES })) ?? '';
  if (!conf.split('\n').includes(`hostsdir=${dir}`)) return [];
  const path = join(dir, HOSTS_FILE);
  const text = (await readInputFileIfPresent(path, { flag: `${flag}'s api-int hosts file`, maxBytes: OUTPUT_FILE_MAX_BYTES })) ?? '';
  return text.split('\n').flatMap((line) => {
    const [ip = '', name, ...rest] = line.trim().split(/\s+/);
    return name === host && rest.length === 0 ? (canonicalIp(ip) ?? []) : [];
  });
}

/**
 * The hosts file, then the drop-in that names its directory: dnsmasq finds the file whole when
 * it starts. With api-int withheld the drop-in names no hosts directory and the file is left as
 * it is: the dnsmasq still running on the previous drop-in keeps answering api-int from it until
 * it restarts, where an emptied file would have it answer NXDOMAIN (`local=`).
 */
export async function writeDnsmasq(dropIn: string, recordSet: RecordSet, withheld: readonly { readonly name: string }[], flag: string): Promise<{ readonly dropIn: WriteResult; readonly hosts: WriteResult }> {
  const dir = dnsmasqHostsDir(dropIn, flag);
  const apiIntWithheld = withheld.some((w) => w.name === `api-int.${recordSet.domain}`);
  // Both rendered before either is written: a refusal leaves nothing behind.
  const [hostsText, dropInText] = [renderDnsmasqHosts(recordSet), renderDnsmasq(recordSet, dir, apiIntWithheld)];
  const hosts = apiIntWithheld ? { written: false, path: join(dir, HOSTS_FILE) } : await writeHostsFile(dir, hostsText);
  return { hosts, dropIn: await writeFileAtomic(dropIn, dropInText) };
}
