// The quota project ids a `dir` pool gives its volumes: a range of its own, one id per volume, never two volumes on one id.

/**
 * The ids Lode uses, inclusive. Below them sit the small ids operators and other tools pick by
 * hand (/etc/projid); 0 is every file's default project. They need 32-bit project ids, which
 * mkfs.xfs has made by default for years (projid32bit=1) and ext4 always has.
 */
export const PROJECT_ID_FIRST = 1_000_000;
export const PROJECT_ID_LAST = 1_999_999;

/**
 * Which ids are taken (by records, by directories found without one, by in-flight creates, by
 * anything the filesystem already counts or limits) and which comes next. Ids are handed out
 * in rising order from the highest taken one, so an id freed by a delete is not reused at once.
 */
export class ProjectIds {
  private readonly taken = new Set<number>();
  private cursor = PROJECT_ID_FIRST;

  clear(): void {
    this.taken.clear();
    this.cursor = PROJECT_ID_FIRST;
  }

  take(id: number): void {
    this.taken.add(id);
    if (id >= this.cursor && id <= PROJECT_ID_LAST) this.cursor = id === PROJECT_ID_LAST ? PROJECT_ID_FIRST : id + 1;
  }

  free(id: number): void {
    this.taken.delete(id);
  }

  has(id: number): boolean {
    return this.taken.has(id);
  }

  /** Takes and returns a free id; throws when the whole range is taken. */
  next(): number {
    const size = PROJECT_ID_LAST - PROJECT_ID_FIRST + 1;
    for (let i = 0; i < size; i++) {
      const id = PROJECT_ID_FIRST + ((this.cursor - PROJECT_ID_FIRST + i) % size);
      if (!this.taken.has(id)) {
        this.take(id);
        return id;
      }
    }
    throw new Error(`every quota project id from ${PROJECT_ID_FIRST} to ${PROJECT_ID_LAST} is taken`);
  }
}
