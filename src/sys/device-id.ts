// The "major:minor" of a block device node, as /proc/self/mountinfo prints it.
import { statSync } from 'node:fs';

export async function deviceNumber(device: string): Promise<string> {
  const rdev = statSync(device).rdev; // a device node in devtmpfs: never blocks
  // Linux dev_t encoding (new_encode_dev): 12 bits of major, 20 of minor, interleaved.
  const major = (rdev >> 8) & 0xfff;
  const minor = (rdev & 0xff) | ((rdev >> 12) & 0xfff00);
  return `${major}:${minor}`;
}
