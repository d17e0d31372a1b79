// Durable per-volume records inside a pool directory: one JSON file per volume, replaced atomically.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { TEMP_MARKER, syncDirectory, writeFileAtomic } from '../util/atomic-file.js';
import { log } from '../util/log.js';
import { checkRecord, type VolumeRecord } from './volume-record.js';

export const RECORD_SUFFIX = '.json';

/**
 * Contract: `put` returns only once the record is durable (unless asked not to be); `remove` of a missing record
 * is not an error; `loadAll` returns every record that survived, skipping (and logging)
 * files it cannot read rather than refusing to start, and deletes stray temp files.
 */
export class RecordStore {
  constructor(readonly dir: string) {}

  private file(id: string): string {
    return path.join(this.dir, id + RECORD_SUFFIX);
  }

  /** `durable: false` for node-side state (mounts) that a reboot voids anyway. */
  async put(record: VolumeRecord, durable = true): Promise<void> {
    await writeFileAtomic(this.file(record.id), JSON.stringify(record, null, 1) + '\n', durable);
  }

  async remove(id: string): Promise<void> {
    try {
      await fs.unlink(this.file(id));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    await syncDirectory(this.dir);
  }

  async loadAll(): Promise<VolumeRecord[]> {
    const records: VolumeRecord[] = [];
    for (const name of await fs.readdir(this.dir)) {
      const full = path.join(this.dir, name);
      if (name.includes(TEMP_MARKER)) {
        // A write that never reached its rename: the old record (if any) is still whole.
        await fs.rm(full, { force: true });
        continue;
      }
      if (!name.endsWith(RECORD_SUFFIX)) continue;
      try {
        const parsed: unknown = JSON.parse(await fs.readFile(full, 'utf8'));
        const problem = checkRecord(parsed);
        const id = name.slice(0, -RECORD_SUFFIX.length);
        if (problem !== undefined || (parsed as VolumeRecord).id !== id) {
          log('error', 'skipping unreadable volume record', { file: full, problem: problem ?? 'id does not match file name' });
          continue;
        }
        records.push(parsed as VolumeRecord);
      } catch (err) {
        log('error', 'skipping unreadable volume record', { file: full, error: (err as Error).message });
      }
    }
    return records;
  }
}
