// Durable records inside a pool's folder: one JSON file per volume (or snapshot), replaced atomically.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { TEMP_MARKER, prepareFileAtomic, syncDirectory, writeFileAtomic, type PreparedFile } from '../util/atomic-file.js';

export const RECORD_SUFFIX = '.json';

/** A record file the driver cannot use: the volume it names is quarantined, and the file left as it is. */
export interface UnusableRecord {
  id: string;
  file: string;
  problem: string;
  /** True when a newer driver wrote it (a rollback), false when it is damaged or not Lode's. */
  newer: boolean;
}

/**
 * Contract: `put` and `remove` return only once the change is durable (unless asked not to be); `remove` of a missing record
 * is not an error; `loadAll` returns every usable record and, apart, every record file it cannot
 * use (unreadable, not JSON, failing the checks, named after another id, or of a newer format
 * version): those it never changes or removes. The only files it deletes are its own stray temp files.
 */
export class RecordStore<T extends { id: string }> {
  /** `read` turns a file's parsed JSON into a record or says why it is unusable; it never throws. */
  constructor(readonly dir: string, private readonly read: (parsed: unknown, id: string) => { record: T } | { problem: string; newer: boolean }) {}

  private file(id: string): string {
    return path.join(this.dir, id + RECORD_SUFFIX);
  }

  /** A record's file contents. */
  serialize(record: T): string {
    return JSON.stringify(record, null, 1) + '\n';
  }

  /** `durable: false` for node-side state (mounts) that a reboot voids anyway. */
  async put(record: T, durable = true): Promise<void> {
    await writeFileAtomic(this.file(record.id), this.serialize(record), durable);
  }

  /**
   * The record's next version written and fsynced beside its file, not yet in its place: its
   * commit makes it the record (durably) as `put` would, its discard leaves the record as it was.
   */
  prepare(record: T): Promise<PreparedFile> {
    return prepareFileAtomic(this.file(record.id), this.serialize(record));
  }

  /** `durable: false` when the record already on disk says what the next start must do if the removal is lost (a durable "deleting" record). */
  async remove(id: string, durable = true): Promise<void> {
    try {
      await fs.unlink(this.file(id));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    if (durable) await syncDirectory(this.dir);
  }

  async loadAll(): Promise<{ records: T[]; unusable: UnusableRecord[] }> {
    const records: T[] = [];
    const unusable: UnusableRecord[] = [];
    for (const name of await fs.readdir(this.dir)) {
      const full = path.join(this.dir, name);
      if (name.includes(TEMP_MARKER)) {
        // A write that never reached its rename: the old record (if any) is still whole.
        await fs.rm(full, { force: true });
        continue;
      }
      if (!name.endsWith(RECORD_SUFFIX)) continue;
      const id = name.slice(0, -RECORD_SUFFIX.length);
      let reading: { record: T } | { problem: string; newer: boolean };
      try {
        const text = await fs.readFile(full, 'utf8');
        reading = text === '' ? { problem: 'the record file is empty', newer: false } : this.read(JSON.parse(text), id);
      } catch (err) {
        // Unreadable or not JSON at all: a truncated or half-written file, or not ours.
        reading = { problem: (err as Error).message, newer: false };
      }
      if ('record' in reading) records.push(reading.record);
      else unusable.push({ id, file: full, problem: reading.problem, newer: reading.newer });
    }
    return { records, unusable };
  }
}
