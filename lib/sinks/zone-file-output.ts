import { OUTPUT_FILE_MAX_BYTES, readInputFileIfPresent } from '../inputs/admin-file.js';
import type { RecordSet } from '../model.js';
import { formatZoneFile, isZoneFile, nextSerial, parseZoneFile } from '../render/zone-file.js';
import { writeFileAtomic, type WriteResult } from './atomic-write.js';
import { besideCorefile } from './weight-file-output.js';

/** Each Gateway zone's file beside the Corefile, named for the zone. */
export function zoneFilePaths(corefile: string, zones: readonly string[]): ReadonlyMap<string, string> {
  return new Map(zones.map((zone) => [zone, besideCorefile(corefile, `${zone}.zone`)]));
}

/** A zone's file on disk, read, and whether it already says `records` (what both a write and --diff go by). */
async function zoneFileOnDisk(path: string, zone: string, records: string): Promise<{ readonly text: string | undefined; readonly serial: number | undefined; readonly currentRecords: string | undefined; readonly same: boolean }> {
  const text = await readInputFileIfPresent(path, { flag: `the zone file of ${zone}`, maxBytes: OUTPUT_FILE_MAX_BYTES });
  const current = text === undefined ? undefined : parseZoneFile(text);
  return { text, serial: current?.serial, currentRecords: current?.records, same: current !== undefined && isZoneFile(text as string, zone, current.serial, records) };
}

/**
 * Writes a zone's file when it differs from what it would be with the same serial (its records,
 * or a header of an earlier release or edited by hand), with the next serial; a file that is
 * the same is left alone, so CoreDNS reloads nothing and keeps its cache.
 */
export async function writeZoneFile(path: string, zone: string, records: string, nowSeconds = Math.floor(Date.now() / 1000)): Promise<WriteResult> {
  // One that does not read (oversized) is replaced, as the Corefile would be; one that is no regular file the write refuses.
  const disk = await zoneFileOnDisk(path, zone, records).catch(() => ({ serial: undefined, same: false }));
  if (disk.same) return { written: false, path };
  return writeFileAtomic(path, formatZoneFile(zone, nextSerial(disk.serial, nowSeconds), records));
}

/** Every zone file of the record set, each whole before the Corefile that names it is written. */
export async function writeZoneFiles(recordSet: RecordSet, zones: ReadonlyMap<string, string>): Promise<readonly WriteResult[]> {
  const results: WriteResult[] = [];
  for (const [zone, records] of zones) {
    const path = recordSet.zoneFiles?.get(zone);
    if (path !== undefined) results.push(await writeZoneFile(path, zone, records));
  }
  return results;
}

/** --diff: how a zone's file would change, its records compared without the serial a write would give it; '' when it would not be written. */
export async function zoneFileDiff(path: string, zone: string, records: string): Promise<string> {
  const disk = await zoneFileOnDisk(path, zone, records);
  if (disk.same) return '';
  // Loaded here, as for the Corefile: only --diff needs the diff package.
  const { unifiedDiff } = await import('../render/diff.js');
  // Same records under another header (an earlier release's, or edited): the whole file at its serial shows what a write changes.
  if (disk.serial !== undefined && disk.currentRecords === records) return unifiedDiff(disk.text as string, formatZoneFile(zone, disk.serial, records), path, `${path} (rendered)`);
  const before = disk.currentRecords ?? disk.text ?? '';
  return unifiedDiff(before === '' ? '' : `${before}\n`, records === '' ? '' : `${records}\n`, path, `${path} (rendered)`);
}
