// The bench's data mechanism: pod annotations that make kubelet write a deterministic file into a volume, or expect another pod's file, compared byte for byte.
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { ANN_BENCH_EXPECT_DATA, ANN_BENCH_WRITE_DATA } from '../api/annotations.js';
import { humanBytes } from '../../util/quantity.js';
import { parseExpectations, parseWrites, type DataExpectation, type DataWrite } from '../api/data-annotations.js';

/** The file, at the root of the volume. */
export const DATA_FILE = 'lode-bench-data';

/** The bytes a writer puts into its volume: a SHA-256 stream keyed by writer and volume, so any reader can rebuild them. */
export function dataFor(writer: string, volume: string, bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  for (let off = 0, i = 0; off < bytes; off += 32, i++) {
    createHash('sha256').update(`${writer}\0${volume}\0${i}`).digest().copy(out, off, 0, Math.min(32, bytes - off));
  }
  return out;
}

function digest(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex').slice(0, 16);
}

/** Both annotations of a pod, checked (the manifest loader reports errors before anything starts). */
export function podDataPlan(pod: V1Pod): { writes: DataWrite[]; expects: DataExpectation[] } {
  const ann = pod.metadata?.annotations ?? {};
  const ns = pod.metadata?.namespace ?? 'default';
  return {
    writes: ann[ANN_BENCH_WRITE_DATA] !== undefined ? parseWrites(ann[ANN_BENCH_WRITE_DATA]) : [],
    expects: ann[ANN_BENCH_EXPECT_DATA] !== undefined ? parseExpectations(ann[ANN_BENCH_EXPECT_DATA], ns) : [],
  };
}

/** Writes the file (synced, so a snapshot taken afterwards holds it); returns the event text. */
export async function writeData(mountPath: string, writer: string, w: DataWrite): Promise<string> {
  const data = dataFor(writer, w.volume, w.bytes);
  await writeFile(join(mountPath, DATA_FILE), data, { flush: true });
  return `wrote ${humanBytes(w.bytes)} into volume "${w.volume}" (sha256 ${digest(data)}...)`;
}

/** Reads the file and compares it byte for byte with what the writer wrote; returns [ok, event text]. */
export async function verifyData(mountPath: string, e: DataExpectation): Promise<[boolean, string]> {
  const want = dataFor(e.writer, e.writerVolume, e.bytes);
  let got: Buffer;
  try {
    got = await readFile(join(mountPath, DATA_FILE));
  } catch (err) {
    return [false, `volume "${e.volume}": no data of ${e.writer}/${e.writerVolume}: ${(err as Error).message}`];
  }
  if (got.length !== want.length) return [false, `volume "${e.volume}": ${got.length} bytes, but ${e.writer} wrote ${want.length} into "${e.writerVolume}"`];
  if (!got.equals(want)) {
    let i = 0;
    while (got[i] === want[i]) i++;
    return [false, `volume "${e.volume}": differs from what ${e.writer} wrote into "${e.writerVolume}" from byte ${i} on`];
  }
  return [true, `volume "${e.volume}" holds the ${humanBytes(e.bytes)} ${e.writer} wrote into "${e.writerVolume}", byte for byte (sha256 ${digest(got)}...)`];
}
