// Bytes a pool's own storage holds, per volume, with their sum: what a backend adds to the free space it reads to get its capacity.

export class StorageBytes {
  private readonly bytes = new Map<string, number>();
  private sum = 0;

  /** Sets what `key` (an image, a volume id) holds; 0 forgets it. */
  set(key: string, bytes: number): void {
    this.sum += bytes - (this.bytes.get(key) ?? 0);
    if (bytes > 0) this.bytes.set(key, bytes);
    else this.bytes.delete(key);
  }

  get total(): number {
    return this.sum;
  }

  clear(): void {
    this.bytes.clear();
    this.sum = 0;
  }
}
