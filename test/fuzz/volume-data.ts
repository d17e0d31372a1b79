// Writing a known pattern into a published volume and hashing it back, for the campaigns that check data survives what they do to the driver.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/** The file that holds the data: the device node itself for raw block, a file inside a filesystem otherwise. */
export function dataFile(target: string, block: boolean): string {
  return block ? target : path.join(target, 'data');
}

/** Writes `data` at offset 0 and syncs it, so a kill afterwards cannot take it back. */
export async function writeVolumeData(target: string, block: boolean, data: Buffer): Promise<void> {
  const f = await fs.open(dataFile(target, block), block ? 'r+' : 'w');
  try {
    await f.write(data, 0, data.length, 0);
    await f.sync();
  } finally {
    await f.close();
  }
}

/** sha256 of the first `bytes` bytes, hex. */
export async function volumeDataHash(target: string, block: boolean, bytes: number): Promise<string> {
  const f = await fs.open(dataFile(target, block), 'r');
  try {
    const buf = Buffer.alloc(bytes);
    await f.read(buf, 0, bytes, 0);
    return createHash('sha256').update(buf).digest('hex');
  } finally {
    await f.close();
  }
}
