// Resolving and creating paths beneath a root directory one component at a time through open directory handles, so no symlink can lead out of it.
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, rmdirSync, unlinkSync, type Stats } from 'node:fs';
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
 * A path that changed under the lookup, or under a step on its entry, faster than a look again
 * could settle: someone is racing the path. Nothing was followed out of the root; the same call
 * may well succeed a moment later, so it is a conflict to retry, never the node's fault.
 */
export class PathChanged extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PathChanged';
  }
}

const errnoOf = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

/** The inode an entry was made as, so cleanup removes that one and not what replaced it. */
interface Identity {
  dev: number;
  ino: number;
}

function identityOf(fd: number): Identity {
  const st = fstatSync(fd);
  return { dev: st.dev, ino: st.ino };
}

/**
 * The id of the mount a handle lies on (/proc/self/fdinfo's mnt_id), the same number as the
 * first field of mountinfo: unlike a path, it names the mount however its directories were renamed.
 */
function mountIdOf(fd: number): number | undefined {
  const m = /^mnt_id:\s*(\d+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
  return m?.[1] === undefined ? undefined : Number(m[1]);
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
  /** The entry this handle made (makeDirectory, makeFile): the only one removeIfMade removes. */
  private made: Identity | undefined;
  /** The entry makeDirectory or makeFile made or found fit: the only one withEntry mounts onto. */
  private checked: Identity | undefined;

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
      if (errnoOf(err) === 'ENOENT') return undefined;
      throw err;
    }
  }

  /**
   * Makes the entry a directory unless it is an empty one; true when this call made it. A
   * directory with something in it is refused: a mount would hide what is there, and the
   * directory could not be removed again at unmount. The lookup followed every link, so a link
   * here now was swapped in since: the path changed, not its shape.
   */
  makeDirectory(): boolean {
    // Each round either settles or saw the entry vanish between two steps: look again, within the lookup's bound.
    for (let round = 0; round <= MAX_LINKS; round++) {
      let made = false;
      try {
        mkdirSync(this.ref, 0o750);
        made = true;
      } catch (err) {
        const code = errnoOf(err);
        // The held directory itself was removed: the entry's path no longer leads here.
        if (code === 'ENOENT') throw new PathChanged(`the directory holding ${this.path} was removed while it was being used`);
        if (code !== 'EEXIST') throw err;
      }
      let fd: number;
      try {
        fd = openSync(this.ref, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
      } catch (err) {
        const code = errnoOf(err);
        if (code === 'ENOENT') continue; // removed since the mkdir: make it again
        if (code === 'ELOOP' || made) throw new PathChanged(`${this.path} was replaced while it was being used`);
        if (code === 'ENOTDIR') {
          // A symlink opened with O_NOFOLLOW|O_DIRECTORY may also answer ENOTDIR: tell a file from a link.
          if (this.stat()?.isSymbolicLink()) throw new PathChanged(`${this.path} was replaced by a symlink while it was being used`);
          throw new PathRefused(`${this.path} exists and is not a directory`);
        }
        throw err;
      }
      try {
        // Read through the handle: the directory that will be mounted onto, whatever its name
        // leads to now. Also one just made: between the mkdir and the open someone may have put
        // their own directory in its place, and a mount would hide what is in it.
        if (readdirSync(handleRef(fd)).length > 0) {
          if (made) throw new PathChanged(`${this.path} was replaced while it was being used`);
          throw new NotEmpty(`${this.path} is a directory with something in it; a mount there would hide it`);
        }
        this.checked = identityOf(fd);
        if (made) this.made = this.checked;
      } finally {
        closeSync(fd);
      }
      return made;
    }
    throw new PathChanged(`${this.path} keeps changing`);
  }

  /** Makes the entry an empty regular file unless it is one (raw block targets); true when made. */
  makeFile(): boolean {
    for (let round = 0; round <= MAX_LINKS; round++) {
      let fd: number;
      try {
        fd = openSync(this.ref, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, 0o600);
      } catch (err) {
        const code = errnoOf(err);
        if (code === 'ENOENT') throw new PathChanged(`the directory holding ${this.path} was removed while it was being used`);
        if (code !== 'EEXIST') throw err;
        const st = this.stat();
        if (st === undefined) continue; // removed since the open: make it again
        if (st.isSymbolicLink()) throw new PathChanged(`${this.path} was replaced by a symlink while it was being used`);
        if (!st.isFile()) throw new PathRefused(`${this.path} exists and is not a regular file`);
        this.checked = { dev: st.dev, ino: st.ino };
        return false;
      }
      try {
        this.made = identityOf(fd);
        this.checked = this.made;
      } finally {
        closeSync(fd);
      }
      return true;
    }
    throw new PathChanged(`${this.path} keeps changing`);
  }

  /**
   * Runs `fn` with a reference to the entry itself, for a mount onto it: held open without
   * following a link, so a link swapped in after the checks is refused rather than followed.
   * It comes after makeDirectory or makeFile checked the entry, so anything else there now was
   * swapped in since.
   */
  withEntry<T>(kind: 'directory' | 'file', fn: (ref: string) => Promise<T>): Promise<T> {
    let fd: number;
    try {
      fd = openSync(this.ref, kind === 'directory' ? DIR_FLAGS : O_PATH | constants.O_NOFOLLOW);
    } catch (err) {
      const code = errnoOf(err);
      if (code === 'ELOOP' || code === 'ENOTDIR' || code === 'ENOENT') return Promise.reject(new PathChanged(`${this.path} was removed or replaced while it was being used`));
      return Promise.reject(refusal(err as NodeJS.ErrnoException, this.path));
    }
    const st = fstatSync(fd);
    const swapped = this.checked !== undefined && (st.dev !== this.checked.dev || st.ino !== this.checked.ino);
    if (swapped || (kind === 'directory' ? !st.isDirectory() : !st.isFile())) {
      // Another entry than the one checked empty: a mount onto it could hide someone's files.
      closeSync(fd);
      return Promise.reject(new PathChanged(`${this.path} was replaced while it was being used`));
    }
    // Checked empty again right before the mount, through the handle it goes onto: what was
    // written into it since makeDirectory looked would be hidden.
    if (kind === 'directory' && readdirSync(handleRef(fd)).length > 0) {
      closeSync(fd);
      return Promise.reject(new NotEmpty(`${this.path} is a directory with something in it; a mount there would hide it`));
    }
    return fn(handleRef(fd)).catch((err: unknown) => {
      // The mount(2) of a target removed meanwhile fails (ENOENT, in mount's stderr): when the
      // handle's entry is no longer at its name, the race is what failed the step.
      throw this.stillAt(fd) ? err : new PathChanged(`${this.path} was removed or replaced while it was being mounted`);
    }).finally(() => closeSync(fd));
  }

  /** Whether the entry's name still leads to the inode the handle `fd` holds. */
  private stillAt(fd: number): boolean {
    try {
      // A mount left up on it hides the entry's own inode from a look by name: it is there.
      if (this.mountedHere() !== undefined) return true;
      const held = fstatSync(fd);
      const now = lstatSync(this.ref);
      return held.nlink > 0 && held.dev === now.dev && held.ino === now.ino;
    } catch {
      return false;
    }
  }

  /**
   * The id of the mount on the entry itself (mountinfo's first field), or undefined when nothing
   * is mounted there: the entry's lookup crosses into a mount on it, so its handle lies on
   * another mount than the held directory. Through handles, not names, so a directory above
   * renamed since the mount table was read cannot make another mount pass for it.
   */
  mountedHere(): number | undefined {
    if (this.dirFd === undefined) return undefined;
    let fd: number;
    try {
      fd = openSync(this.ref, O_PATH | constants.O_NOFOLLOW);
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return undefined;
      throw err;
    }
    try {
      const id = mountIdOf(fd);
      return id !== undefined && id !== mountIdOf(this.dirFd) ? id : undefined;
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Removes the entry if it is an empty directory or an empty regular file; never anything with
   * content. Says what it found: a directory with something in it is kept, and so is an entry
   * swapped for another kind between the look and the removal.
   */
  removeIfEmpty(): 'removed' | 'absent' | 'kept' {
    return this.remove(undefined);
  }

  /**
   * Removes the entry only if it is still the one this handle made, and empty: a failed stage
   * or publish takes back what it made, never what a racer put in its place.
   */
  removeIfMade(): 'removed' | 'absent' | 'kept' {
    return this.made === undefined ? 'kept' : this.remove(this.made);
  }

  private remove(only: Identity | undefined): 'removed' | 'absent' | 'kept' {
    const st = this.stat();
    if (st === undefined) return 'absent';
    if (only !== undefined && (st.dev !== only.dev || st.ino !== only.ino)) return 'kept';
    try {
      if (st.isDirectory()) rmdirSync(this.ref);
      else if (st.isFile() && st.size === 0) unlinkSync(this.ref);
      else return 'kept';
      return 'removed';
    } catch (err) {
      const code = errnoOf(err);
      if (code === 'ENOENT') return 'absent';
      if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'EBUSY' || code === 'ENOTDIR' || code === 'EISDIR') return 'kept';
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

/** A held handle on the directory `ref` names, or undefined for whatever fails (the caller looks why). */
function openDirectoryOrNothing(ref: string): number | undefined {
  try {
    return openSync(ref, DIR_FLAGS);
  } catch {
    return undefined;
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
  let queue: Step[] = rel.map((name) => ({ name, viaLink: false }));
  let links = 0;
  /**
   * Looks taken again after a race was lost, bounded like the links: a path that keeps
   * changing for that long is someone racing the call, which a retry later may win.
   */
  let retries = 0;
  const again = (where: string) => {
    if (++retries > MAX_LINKS) throw new PathChanged(`${where} keeps changing while it is looked up`);
  };
  /**
   * A directory held on the way was removed (its entries now answer ENOENT): where the path
   * leads is decided again from the root, as a fresh lookup would.
   */
  const restart = (where: string) => {
    again(where);
    while (held.length > 0) closeSync(held.pop()?.fd ?? rootFd);
    queue = rel.map((name) => ({ name, viaLink: false }));
    links = 0;
  };
  const heldGone = () => {
    try {
      return fstatSync(top()).nlink === 0;
    } catch {
      return true;
    }
  };
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
      if (queue.length > 0) {
        // A directory on the way, as nearly every one is: opened without a look first. The
        // open refuses a link (O_NOFOLLOW with O_DIRECTORY: ENOTDIR) and anything else that is
        // not a directory, so an open that succeeds is what the look would have let through;
        // anything else is looked at below as before.
        const fd = openDirectoryOrNothing(ref);
        if (fd !== undefined) {
          held.push({ name, fd });
          continue;
        }
      }
      const where = path.join(here(), name);
      let st: Stats | undefined;
      try {
        st = lstatSync(ref);
      } catch (err) {
        if (errnoOf(err) !== 'ENOENT') throw refusal(err as NodeJS.ErrnoException, where);
      }
      if (st === undefined && held.length > 0 && heldGone()) {
        // Not missing: the directory it would be in was removed under us.
        restart(where);
        continue;
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
          const code = errnoOf(err);
          if (code === 'ENOENT') {
            // The held directory was removed since the look: start over from the root.
            restart(where);
            continue;
          }
          if (code !== 'EEXIST') throw refusal(err as NodeJS.ErrnoException, where);
        }
        queue.unshift(step); // look again: whatever is there now is checked like anything else
        continue;
      }
      if (st.isSymbolicLink()) {
        if (++links > MAX_LINKS) throw new PathRefused(`${where}: too many levels of symlinks`);
        let target: string;
        try {
          target = readlinkSync(ref);
        } catch (err) {
          const code = errnoOf(err);
          // Removed (ENOENT) or replaced by something else (EINVAL) since the look: look again.
          if (code !== 'ENOENT' && code !== 'EINVAL') throw err;
          links--;
          again(where);
          queue.unshift(step);
          continue;
        }
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
        const code = errnoOf(err);
        if (code === 'ELOOP' || code === 'ENOTDIR' || code === 'ENOENT') {
          // Swapped between the look and the open: look again, within the same bound on links.
          again(where);
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
