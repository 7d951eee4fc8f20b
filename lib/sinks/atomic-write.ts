import type { FileHandle } from 'node:fs/promises';
import { lstat, open, readdir, readFile, readlink, realpath, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ConfigError, quote, WriteError } from '../errors.js';

// Hand-written, not write-file-atomic: that neither fsyncs the directory after the rename, keeps
// an unchanged file untouched, nor reports which step failed, all of which a live Corefile needs.

/**
 * Unique enough beside the pid and the exclusive create ('wx'); not node:crypto, whose load
 * alone costs a one-shot render a few milliseconds at every node boot.
 */
function uniqueSuffix(): string {
  return `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
}

export interface WriteResult {
  readonly written: boolean;
  /** The file actually compared and replaced: the symlink's target when `path` is a symlink. */
  readonly path: string;
}

const NEW_FILE_MODE = 0o644;

/**
 * A temp file this old cannot belong to a write still in progress (one takes milliseconds), so
 * its writer was killed between create and rename. Age is the test rather than "not one of this
 * process's writes" because the directory may be shared with another process (a one-shot
 * `render` next to the monitor, or a second container on the same volume) whose live temp file
 * must not be pulled from under it; its pid is no help either, being from another pid namespace.
 */
const STALE_TEMP_AGE_MS = 60_000;

const TEMP_FILE = { prefix: 'lbdns-', suffix: '.tmp' } as const;

/**
 * The name of a temp file for `base`: `.<base>.lbdns-<pid>-<unique>.tmp`. The writer names its
 * files with it and the cleanup recognises them with isTempFileOf, so the two cannot drift apart.
 */
export function tempFileName(base: string, pid: number = process.pid, unique: string = uniqueSuffix()): string {
  return `.${base}.${TEMP_FILE.prefix}${pid}-${unique}${TEMP_FILE.suffix}`;
}

function isTempFileOf(base: string, name: string): boolean {
  const head = `.${base}.${TEMP_FILE.prefix}`;
  if (!name.startsWith(head) || !name.endsWith(TEMP_FILE.suffix)) return false;
  return /^[0-9]+-[0-9a-z]+$/.test(name.slice(head.length, -TEMP_FILE.suffix.length));
}

/** Replaces `path` with `content` atomically, or does nothing when the bytes on disk are already equal. */
export async function writeFileAtomic(path: string, content: string | Uint8Array): Promise<WriteResult> {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  const target = await resolveTarget(path);
  const dir = dirname(target);
  const base = basename(target);
  // Before the comparison: a one-shot render that finds the file unchanged still clears up.
  await removeStaleTempFiles(dir, base);
  const current = await readCurrent(target);
  if (current && current.bytes.equals(bytes)) return { written: false, path: target };

  const tempPath = join(dir, tempFileName(base));
  let step = 'creating the temporary file';
  let handle: FileHandle | undefined;
  let created = false;
  try {
    handle = await open(tempPath, 'wx', 0o600);
    created = true;
    step = 'writing the temporary file';
    // writeFile loops over short writes: a plain write() returns a short count, not an error,
    // when the disk or RLIMIT_FSIZE runs out midway.
    await handle.writeFile(bytes);
    // A root writer would otherwise hand a 0600 file owned by the coredns user to root, and CoreDNS
    // could no longer read it. Only root may give a file away: another user's writes take the file
    // over, keeping its group where they are a member of it (a 0640 file CoreDNS reads by group).
    const root = process.getuid?.() === 0;
    if (current && (current.uid !== process.getuid?.() || current.gid !== process.getgid?.())) {
      step = 'setting its owner';
      await handle.chown(root ? current.uid : -1, current.gid).catch((err: unknown) => {
        if (root || errCode(err) !== 'EPERM') throw err;
      });
    }
    step = 'setting its mode';
    // fchmod rather than open's mode argument: the umask must not decide who can read the Corefile.
    // After chown, which clears set-id bits.
    await handle.chmod(current ? current.mode : NEW_FILE_MODE);
    step = 'syncing it to disk';
    await handle.sync();
    step = 'closing it';
    const closing = handle;
    handle = undefined;
    await closing.close();
    step = 'renaming it over the target';
    await rename(tempPath, target);
    created = false;
  } catch (err) {
    await handle?.close().catch(() => undefined);
    if (created) await rm(tempPath, { force: true }).catch(() => undefined);
    throw writeError(target, step, err, 'the previous content is still in place');
  }

  try {
    await syncDirectory(dir);
  } catch (err) {
    throw writeError(target, 'syncing the directory', err, 'the new content is in place but may be lost if the node crashes now');
  }
  return { written: true, path: target };
}

/**
 * Writes go to the symlink's target, next to the real file: replacing the link itself with a
 * regular file would silently detach it from whatever the link pointed at (a file on a mounted
 * volume, a file another tool keeps updated).
 */
async function resolveTarget(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (err) {
    if (errCode(err) !== 'ENOENT') throw writeError(path, 'resolving the path', err, 'nothing was written');
  }
  const link = await lstat(path).catch(() => null);
  if (link?.isSymbolicLink()) {
    throw new WriteError(
      `cannot write ${quote(path)}: it is a symlink whose target does not exist; nothing was written. Create the target's directory or point the output at a regular file path`,
    );
  }
  return path;
}

interface CurrentFile {
  readonly bytes: Buffer;
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
}

/**
 * Refuses, before anything is written, an output path that names a directory (or any other
 * non-file): a command writes several files, and finding this at the last one would leave
 * the others written.
 */
export async function checkOutputPath(target: string, flag: string): Promise<void> {
  const refuse = (why: string): never => {
    throw new ConfigError(`${flag} ${quote(target)}: ${why}; nothing was written. Give the path of a file`);
  };
  if (target.endsWith('/')) refuse('names a directory');
  const info = await stat(target).catch((err: unknown) => (errCode(err) === 'ENOENT' ? null : Promise.reject(writeError(target, 'checking the output path', err, 'nothing was written'))));
  if (info !== null && !info.isFile()) refuse(info.isDirectory() ? 'is a directory' : 'exists and is not a regular file');
  if (info === null && (await lstat(target).catch(() => null))?.isSymbolicLink() === true) refuse('is a symlink whose target does not exist');
  // Found now, not at the first write: a monitor would start and retry that write for good, a one-shot wait out --wait-timeout first.
  if (info === null && (await stat(dirname(resolve(target))).catch(() => null))?.isDirectory() !== true) refuse(`its directory ${quote(dirname(resolve(target)))} does not exist`);
}

export interface Output {
  /** For the message: `--out`, `the Gateway weight file`… */
  readonly what: string;
  readonly path: string;
}

/** Where a write to `path` lands, and the file there when one is (device and inode): one file reached two ways is one identity. */
async function fileIdentity(path: string): Promise<{ readonly key: string; readonly id: string | undefined }> {
  const key = await whereWritten(path);
  const info = await stat(key).catch(() => null);
  return { key, id: info === null ? undefined : `${info.dev}:${info.ino}` };
}

const sameFile = (a: { readonly key: string; readonly id: string | undefined }, b: { readonly key: string; readonly id: string | undefined }): boolean => a.key === b.key || (a.id !== undefined && a.id === b.id);

/**
 * Refuses two outputs that are one path, or one existing file reached two ways: the second
 * write would replace the first (a Corefile over the zone file it names, which CoreDNS then refuses).
 */
export async function checkDistinctOutputs(outputs: readonly Output[]): Promise<void> {
  const seen: { readonly output: Output; readonly key: string; readonly id: string | undefined }[] = [];
  for (const output of outputs) {
    const identity = await fileIdentity(output.path);
    const same = seen.find((s) => sameFile(s, identity));
    if (same !== undefined) {
      throw new ConfigError(`${output.what} ${quote(output.path)} is the same file as ${same.output.what} ${quote(same.output.path)}; nothing was written. Give each output a path of its own`);
    }
    seen.push({ output, ...identity });
  }
}

/**
 * Refuses an output that is one of the files lbdns reads (the config file, the template, the
 * kubeconfig…): the write would replace the input with a Corefile and still exit 0.
 */
export async function checkNotInputs(outputs: readonly Output[], inputs: readonly Output[]): Promise<void> {
  const read = await Promise.all(inputs.map(async (input) => ({ input, ...(await fileIdentity(input.path)) })));
  for (const output of outputs) {
    const identity = await fileIdentity(output.path);
    const same = read.find((r) => sameFile(r, identity));
    if (same !== undefined) {
      throw new ConfigError(`${output.what} ${quote(output.path)} is the same file as ${same.input.what} ${quote(same.input.path)}, which lbdns reads; nothing was written. Give the output a path of its own`);
    }
  }
}

/**
 * The path a write to `path` lands on: through a symlink, even one to a file not there yet,
 * and its directory's symlinks, as the write follows them.
 */
async function whereWritten(path: string, depth = 0): Promise<string> {
  const absolute = resolve(path);
  const dir = await realpath(dirname(absolute)).catch(() => dirname(absolute));
  const at = join(dir, basename(absolute));
  const link = depth < 40 ? await readlink(at).catch(() => undefined) : undefined;
  return link === undefined ? at : whereWritten(resolve(dir, link), depth + 1);
}

async function readCurrent(target: string): Promise<CurrentFile | null> {
  const step = 'reading the current file';
  let info;
  try {
    info = await stat(target);
  } catch (err) {
    if (errCode(err) === 'ENOENT') return null;
    throw writeError(target, step, err, 'nothing was written');
  }
  if (!info.isFile()) {
    throw new WriteError(`cannot write ${quote(target)}: it exists and is not a regular file; nothing was written. Remove it or choose another output path`);
  }
  try {
    return { bytes: await readFile(target), mode: info.mode & 0o7777, uid: info.uid, gid: info.gid };
  } catch (err) {
    throw writeError(target, step, err, 'nothing was written');
  }
}

async function removeStaleTempFiles(dir: string, base: string): Promise<void> {
  // Best effort: a leftover temp file wastes space but must never stop the Corefile from being written.
  const names = await readdir(dir).catch(() => [] as string[]);
  const now = Date.now();
  await Promise.all(
    names
      .filter((name) => isTempFileOf(base, name))
      .map(async (name) => {
        const file = join(dir, name);
        const info = await lstat(file).catch(() => null);
        if (info?.isFile() && now - info.mtimeMs > STALE_TEMP_AGE_MS) await rm(file, { force: true }).catch(() => undefined);
      }),
  );
}

/** Without this the rename may not survive a power loss even though the file's data does. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function errCode(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

function writeError(target: string, step: string, err: unknown, outcome: string): WriteError {
  const detail = err instanceof Error ? err.message : String(err);
  const code = errCode(err);
  const hint =
    code === 'EBUSY'
      ? 'The file is a mount point (for example a Kubernetes subPath mount), which cannot be replaced atomically; mount its directory instead'
      : code === 'ENOENT'
        ? `Check that the directory ${quote(dirname(target))} exists`
        : `Check free disk space and inodes on ${quote(dirname(target))}, write permission on that directory, and whether it is mounted read-only`;
  return new WriteError(`cannot write ${quote(target)}: ${step} failed: ${detail}; ${outcome}. ${hint}`, { cause: err });
}
