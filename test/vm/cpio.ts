// Writes a newc cpio archive, the format the kernel unpacks as an initramfs, without an external tool.

export interface CpioEntry {
  /** Path inside the archive, without a leading slash. */
  name: string;
  kind: 'dir' | 'file';
  /** Permission bits. */
  mode: number;
  data?: Buffer;
}

const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;

function hex8(n: number): string {
  return n.toString(16).padStart(8, '0');
}

// newc aligns every header+name and every file body to four bytes.
function pad4(len: number): Buffer {
  return Buffer.alloc((4 - (len % 4)) % 4);
}

function record(ino: number, name: string, mode: number, data: Buffer): Buffer[] {
  const nameBytes = Buffer.from(`${name}\0`, 'utf8');
  const header = Buffer.from(
    '070701' +
      [ino, mode, 0, 0, 1, 0, data.length, 0, 0, 0, 0, nameBytes.length, 0].map(hex8).join(''),
    'ascii',
  );
  return [header, nameBytes, pad4(header.length + nameBytes.length), data, pad4(data.length)];
}

export function cpioArchive(entries: readonly CpioEntry[]): Buffer {
  const parts: Buffer[] = [];
  entries.forEach((e, i) => {
    const type = e.kind === 'dir' ? S_IFDIR : S_IFREG;
    parts.push(...record(i + 1, e.name.replace(/^\/+/, ''), type | (e.mode & 0o7777), e.data ?? Buffer.alloc(0)));
  });
  parts.push(...record(0, 'TRAILER!!!', 0, Buffer.alloc(0)));
  return Buffer.concat(parts);
}
