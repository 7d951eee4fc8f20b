import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { ConfigError, quote } from '../errors.js';

/** Larger than any real config file or Corefile template; a bigger one is a mistake or an attack. */
const INPUT_FILE_MAX_BYTES = 1024 * 1024;

/** Far above what lbdns writes (a Corefile, a zone or weight file of every Gateway name): one it reads back is refused past this, not read whole. */
export const OUTPUT_FILE_MAX_BYTES = 64 * 1024 * 1024;

export interface InputFileRules {
  /** How the message names it: `--config`, `--template`, `kubeconfig`. */
  readonly flag: string;
  /** What to do about a file that cannot be opened, after its error code. */
  readonly hint?: string;
  /**
   * The file is code lbdns runs with its own rights (a template): only its owner, and that
   * owner only root or the user lbdns runs as, may be able to change it.
   */
  readonly code?: boolean;
  /** The most bytes read; default INPUT_FILE_MAX_BYTES. */
  readonly maxBytes?: number;
}

const describeMode = (mode: number): string => `mode ${(mode & 0o777).toString(8).padStart(4, '0')}`;

/**
 * Reads a file lbdns is told to read (config, template, resolv.conf, kubeconfig, CA bundle),
 * refusing one that is not a regular file or larger than INPUT_FILE_MAX_BYTES before reading
 * it. Opened non-blocking, so a FIFO or a device is refused rather than waited on; checked on
 * the open file, so a file swapped after the check is not the one read.
 */
export async function readInputFile(path: string, rules: InputFileRules): Promise<string> {
  return (await readInputBytes(path, rules)).toString('utf8');
}

export async function readInputBytes(path: string, rules: InputFileRules): Promise<Buffer> {
  const bytes = await readBytes(path, rules, false);
  return bytes as Buffer;
}

/** As readInputFile, for a file lbdns may be the first to write (`--out` for --diff, or kept): undefined where there is none. */
export async function readInputFileIfPresent(path: string, rules: InputFileRules): Promise<string | undefined> {
  return (await readBytes(path, rules, true))?.toString('utf8');
}

async function readBytes(path: string, rules: InputFileRules, ifPresent: boolean): Promise<Buffer | undefined> {
  const fail = (why: string) => new ConfigError(`${rules.flag} ${quote(path)}: ${why}`);
  const max = rules.maxBytes ?? INPUT_FILE_MAX_BYTES;
  const size = max === INPUT_FILE_MAX_BYTES ? '1 MiB' : `${Math.round(max / 1024 / 1024)} MiB`;
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    if (ifPresent && (err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw fail(`cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})${rules.hint ? `; ${rules.hint}` : ''}`);
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw fail('is not a regular file');
    if (st.size > max) throw fail(`is ${st.size} bytes; lbdns reads at most ${max} (${size})`);
    if (rules.code) {
      if ((st.mode & 0o022) !== 0) {
        throw fail(`is writable by its group or by others (${describeMode(st.mode)}); a template is code lbdns runs with its own rights, so only its owner may write it: chmod go-w ${quote(path)}`);
      }
      const self = process.getuid?.();
      if (st.uid !== 0 && st.uid !== self) {
        throw fail(`is owned by uid ${st.uid}, neither root nor the user lbdns runs as (uid ${self}); a template is code lbdns runs with its own rights, so only they may own it`);
      }
    }
    // At most one byte more than allowed: a file that grew after the check is refused, not read whole.
    const buffer = Buffer.alloc(Math.min(st.size, max) + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > max) throw fail(`is larger than ${max} bytes (${size}), the most lbdns reads`);
    return buffer.subarray(0, bytesRead);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw fail(`cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  } finally {
    await handle.close();
  }
}
