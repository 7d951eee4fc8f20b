import { isPlainPath } from '../grammar/validate.js';
import { dirname, join } from 'node:path';
import { ConfigError, quote } from '../errors.js';
import type { WeightBlock } from '../model.js';
import { formatWeightFile } from '../render/weight-file.js';
import { writeFileAtomic, type WriteResult } from './atomic-write.js';
import { OUTPUT_FILE_MAX_BYTES, readInputFileIfPresent } from '../inputs/admin-file.js';

const WEIGHT_FILE = 'Corefile.weights';

/**
 * A file the Corefile names goes next to the Corefile, so the volume that carries the Corefile
 * to CoreDNS carries it too; the Corefile names it by this absolute path, which CoreDNS must
 * see at the same place.
 */
export function besideCorefile(corefile: string, name: string): string {
  const path = join(dirname(corefile), name);
  if (!path.startsWith('/') || !isPlainPath(path)) {
    throw new ConfigError(`--out ${quote(corefile)}: Gateway DNS writes ${name} beside the Corefile and names it there by its absolute path, so --out must be an absolute path of letters, digits, '.', '_', '-' and '/'`);
  }
  return path;
}

export const weightFilePath = (corefile: string): string => besideCorefile(corefile, WEIGHT_FILE);

/** Written before the Corefile that names it: CoreDNS refuses a loadbalance weighted file it cannot open. */
export function writeWeightFile(path: string, blocks: readonly WeightBlock[]): Promise<WriteResult> {
  return writeFileAtomic(path, formatWeightFile(blocks));
}

/** --diff: how the weight file would change; '' when it would not. */
export async function weightFileDiff(path: string, blocks: readonly WeightBlock[]): Promise<string> {
  const current = (await readInputFileIfPresent(path, { flag: 'the Gateway weight file', maxBytes: OUTPUT_FILE_MAX_BYTES })) ?? '';
  const text = formatWeightFile(blocks);
  if (current === text) return '';
  const { unifiedDiff } = await import('../render/diff.js');
  return unifiedDiff(current, text, path, `${path} (rendered)`);
}
