// Copies the first bytes of one block device onto another, every block written and on disk before it returns.
import { run } from './exec.js';

/** A copy of a large volume under emulation takes minutes; one still running after this is stuck. */
const TIMEOUT_MS = 60 * 60_000;

/**
 * Writes `bytes` of `from` onto `to`. No block is skipped as a hole: a new linear logical
 * volume holds whatever its extents held before, so zeros must be written as data.
 */
export async function copyDevice(from: string, to: string, bytes: number): Promise<void> {
  await run('dd', [`if=${from}`, `of=${to}`, 'bs=4M', `count=${bytes}`, 'iflag=count_bytes,fullblock', 'conv=fsync,nocreat', 'status=none'], { timeoutMs: TIMEOUT_MS });
}
