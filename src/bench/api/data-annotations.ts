// The bench's data annotations, parsed: which volume a pod writes (and how much), and whose file another volume must hold.
import { ANN_BENCH_EXPECT_DATA, ANN_BENCH_WRITE_DATA } from './annotations.js';
import { parseQuantity } from '../../util/quantity.js';

/** What kubelet writes when a pod names no size. */
const DEFAULT_BYTES = 2 ** 20;

export interface DataWrite {
  volume: string;
  bytes: number;
}

export interface DataExpectation {
  volume: string;
  /** "namespace/pod" of the writer. */
  writer: string;
  writerVolume: string;
  bytes: number;
}

function sizeOf(s: string | undefined, where: string): number {
  if (s === undefined || s === '') return DEFAULT_BYTES;
  const n = parseQuantity(s);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${where}: size ${JSON.stringify(s)} must be a positive whole number of bytes`);
  return n;
}

/** "data" or "data=4Mi, logs" -> what to write where (default 1Mi). */
export function parseWrites(value: string): DataWrite[] {
  return value.split(',').map((p) => p.trim()).filter((p) => p !== '').map((p) => {
    const [volume, size] = p.split('=').map((x) => x.trim());
    if (!volume) throw new Error(`${ANN_BENCH_WRITE_DATA}: "${p}" is not VOLUME[=SIZE]`);
    return { volume, bytes: sizeOf(size, ANN_BENCH_WRITE_DATA) };
  });
}

/** "restored=web-0/data" or "restored=other-ns/web-0/data:4Mi" -> which writer's file each volume must hold. */
export function parseExpectations(value: string, namespace: string): DataExpectation[] {
  return value.split(',').map((p) => p.trim()).filter((p) => p !== '').map((p) => {
    const eq = p.indexOf('=');
    const volume = p.slice(0, eq).trim();
    const [path, size] = p.slice(eq + 1).trim().split(':');
    const parts = (path ?? '').split('/');
    if (eq <= 0 || volume === '' || (parts.length !== 2 && parts.length !== 3) || parts.some((x) => x === '')) {
      throw new Error(`${ANN_BENCH_EXPECT_DATA}: "${p}" is not VOLUME=[NAMESPACE/]POD/VOLUME[:SIZE]`);
    }
    const writer = parts.length === 3 ? `${parts[0]}/${parts[1]}` : `${namespace}/${parts[0]}`;
    return { volume, writer, writerVolume: parts[parts.length - 1]!, bytes: sizeOf(size, ANN_BENCH_EXPECT_DATA) };
  });
}
