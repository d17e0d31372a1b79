// Resolving and creating paths beneath a root directory one component at a time through open directory handles, so no symlink can lead out of it.
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readlinkSync, rmdirSync, unlinkSync, type Stats } from 'node:fs';
import * as path from 'node:path';

/**
 * Linux O_PATH: a handle that names a directory entry without opening its contents. Node does
 * not export the constant; the value is the same on every Linux architecture Node supports.
 */
const O_PATH = 0o10000000;
const DIR_FLAGS = O_PATH | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** The kernel's own limits: one name, and the number of links a lookup may follow (MAXSYMLINKS). */
const NAME_MAX = 255;
const MAX_LINKS = 40;

/** A directory that holds something of someone else's, where an empty one is needed: the node's state, not the path's form. */
export class NotEmpty extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotEmpty';
  }
}

/** Why a path cannot be used beneath its root; always the caller's path, never the node's fault. */
export class PathRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PathRefused';
  }
}

/**
 * A path reference that the kernel resolves through an open handle: `/proc/<pid>/fd/<n>`. It
 * works for this process and for the tools it runs (root may follow another process's handles),
 * and whatever the path was renamed or relinked to meanwhile, it names the same directory.
 */
function handleRef(fd: number): string {
  return `/proc/${process.pid}/fd/${fd}`;
}

/** One entry of a directory held open: what a stage or publish target is made of. */
export class AnchoredPath {
  private closed = false;

  constructor(
    /** The real path (no symlinks): what the kernel's mount table will name. */
    readonly path: string,
    /** The directory held open; undefined when it does not exist (a lookup found nothing there). */
    private readonly dirFd: number | undefined,
    readonly leaf: string,
  ) {}

  /** The entry looked up in its held directory: one component, and only if it is not a link. */
  get ref(): string {
    if (this.dirFd === undefined) throw new PathRefused(`the directory of ${this.path} does not exist`);
    return `${handleRef(this.dirFd)}/${this.leaf}`;
  }

  /** What the entry is now, without following it; undefined when it does not exist. */
  stat(): Stats | undefined {
    if (this.dirFd === undefined) return undefined;
    try {
      return lstatSync(this.ref);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  /**
   * Makes the entry a directory unless it is an empty one; true when this call made it. A
   * directory with something in it is refused: a mount would hide what is there, and the
   * directory could not be removed again at unmount.
   */
  makeDirectory(): boolean {
    try {
      mkdirSync(this.ref, 0o750);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (!this.stat()?.isDirectory()) throw new PathRefused(`${this.path} exists and is not a directory`);
    if (readdirSync(this.ref).length > 0) throw new NotEmpty(`${this.path} is a directory with something in it; a mount there would hide it`);
    return false;
  }

  /** Makes the entry an empty regular file unless it is one (raw block targets); true when made. */
  makeFile(): boolean {
    let fd: number;
    try {
      fd = openSync(this.ref, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (!this.stat()?.isFile()) throw new PathRefused(`${this.path} exists and is not a regular file`);
      return false;
    }
    closeSync(fd);
    return true;
  }

  /**
   * Runs `fn` with a reference to the entry itself, for a mount onto it: held open without
   * following a link, so a link swapped in after the checks is refused rather than followed.
   */
  withEntry<T>(kind: 'directory' | 'file', fn: (ref: string) => Promise<T>): Promise<T> {
    let fd: number;
    try {
      fd = openSync(this.ref, kind === 'directory' ? DIR_FLAGS : O_PATH | constants.O_NOFOLLOW);
    } catch (err) {
      throw refusal(err as NodeJS.ErrnoException, this.path);
    }
    const st = fstatSync(fd);
    if (kind === 'directory' ? !st.isDirectory() : !st.isFile()) {
      closeSync(fd);
      return Promise.reject(new PathRefused(`${this.path} is not a ${kind === 'directory' ? 'directory' : 'regular file'}`));
    }
    return fn(handleRef(fd)).finally(() => closeSync(fd));
  }

  /**
   * Removes the entry if it is an empty directory or an empty regular file; never anything with
   * content. Says what it found: a directory with something in it is kept.
   */
  removeIfEmpty(): 'removed' | 'absent' | 'kept' {
    const st = this.stat();
    if (st === undefined) return 'absent';
    try {
      if (st.isDirectory()) rmdirSync(this.ref);
      else if (st.isFile() && st.size === 0) unlinkSync(this.ref);
      else return 'kept';
      return 'removed';
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return 'absent';
      if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'EBUSY') return 'kept';
      throw err;
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.dirFd !== undefined) closeSync(this.dirFd);
  }
}

function refusal(err: NodeJS.ErrnoException, where: string): Error {
  switch (err.code) {
    case 'ELOOP': return new PathRefused(`${where} is a symlink`);
    case 'ENOTDIR': return new PathRefused(`${where} is not a directory`);
    case 'ENAMETOOLONG': return new PathRefused(`a name in ${where} is too long`);
    default: return err;
  }
}

interface Step {
  name: string;
  /** Reached through a symlink: must exist (a link to nothing is refused, never created through). */
  viaLink: boolean;
}

/**
 * Resolves `rel` (components below `root`, which must be a real path) the way the kernel would,
 * but refusing to leave `root`: every directory is opened relative to the one before it, links
 * are read and followed by hand, and one that leads out of `root`, to nothing, or in a loop is
 * refused. With `create`, missing directories on the way are made (never through a link). The
 * last component may be missing; the caller decides what to make there. The returned handle
 * holds the last directory open: the caller closes it.
 */
export function openBeneath(root: string, rel: readonly string[], create: boolean): AnchoredPath {
  const held: Array<{ name: string; fd: number }> = [];
  let rootFd: number;
  try {
    rootFd = openSync(root, DIR_FLAGS);
  } catch (err) {
    throw new Error(`target root ${root} cannot be opened: ${(err as Error).message}`);
  }
  const top = () => held[held.length - 1]?.fd ?? rootFd;
  const here = () => path.join(root, ...held.map((h) => h.name));
  const release = (keep?: number) => {
    for (const h of held) if (h.fd !== keep) closeSync(h.fd);
    if (rootFd !== keep) closeSync(rootFd);
  };
  const queue: Step[] = rel.map((name) => ({ name, viaLink: false }));
  let links = 0;
  try {
    for (;;) {
      const step = queue.shift();
      if (step === undefined) throw new PathRefused(`${root} itself cannot be used`);
      const { name } = step;
      if (name === '' || name === '.') {
        if (queue.length === 0) throw new PathRefused(`${here()} names a directory, not an entry in it`);
        continue;
      }
      if (name === '..') {
        const up = held.pop();
        if (up === undefined) throw new PathRefused(`a symlink leads above ${root}`);
        closeSync(up.fd);
        if (queue.length === 0) throw new PathRefused(`a symlink leads to ${here()}, not to an entry in it`);
        continue;
      }
      if (Buffer.byteLength(name, 'utf8') > NAME_MAX) throw new PathRefused(`a name below ${here()} is longer than ${NAME_MAX} bytes`);
      const ref = `${handleRef(top())}/${name}`;
      const where = path.join(here(), name);
      let st: Stats | undefined;
      try {
        st = lstatSync(ref);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw refusal(err as NodeJS.ErrnoException, where);
      }
      if (st === undefined) {
        if (step.viaLink) throw new PathRefused(`a symlink leads to ${where}, which does not exist`);
        if (queue.length === 0) {
          const dirFd = top();
          release(dirFd);
          return new AnchoredPath(where, dirFd, name);
        }
        if (!create) {
          // Nothing below a missing directory exists either: the real path is what it would be.
          for (const s of queue) {
            if (s.viaLink || s.name === '..' || s.name === '.') throw new PathRefused(`${where} does not exist`);
            if (Buffer.byteLength(s.name, 'utf8') > NAME_MAX) throw new PathRefused(`a name below ${where} is longer than ${NAME_MAX} bytes`);
          }
          release();
          const leaf = queue[queue.length - 1]?.name ?? name;
          return new AnchoredPath(path.join(where, ...queue.map((s) => s.name)), undefined, leaf);
        }
        try {
          mkdirSync(ref, 0o750);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw refusal(err as NodeJS.ErrnoException, where);
        }
        queue.unshift(step); // look again: whatever is there now is checked like anything else
        continue;
      }
      if (st.isSymbolicLink()) {
        if (++links > MAX_LINKS) throw new PathRefused(`${where}: too many levels of symlinks`);
        const target = readlinkSync(ref);
        let parts: string[];
        if (path.isAbsolute(target)) {
          const inside = path.relative(root, path.normalize(target));
          if (inside.startsWith('..') || path.isAbsolute(inside)) throw new PathRefused(`${where} is a symlink to ${target}, outside ${root}`);
          while (held.length > 0) closeSync(held.pop()?.fd ?? rootFd);
          parts = inside === '' ? [] : inside.split('/');
        } else {
          parts = target.split('/');
        }
        queue.unshift(...parts.map((p) => ({ name: p, viaLink: true })));
        if (queue.length === 0) throw new PathRefused(`${where} is a symlink to ${root} itself`);
        continue;
      }
      if (queue.length === 0) {
        const dirFd = top();
        release(dirFd);
        return new AnchoredPath(where, dirFd, name);
      }
      if (!st.isDirectory()) throw new PathRefused(`${where} is not a directory`);
      let fd: number;
      try {
        fd = openSync(ref, DIR_FLAGS);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ELOOP' || code === 'ENOTDIR' || code === 'ENOENT') {
          // Swapped between the look and the open: look again, within the same bound on links.
          if (++links > MAX_LINKS) throw new PathRefused(`${where} keeps changing`);
          queue.unshift(step);
          continue;
        }
        throw err;
      }
      held.push({ name, fd });
    }
  } catch (err) {
    release();
    throw err;
  }
}
