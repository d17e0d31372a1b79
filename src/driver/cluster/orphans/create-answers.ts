// When CreateVolume last answered each volume: a volume a provisioner is still asking for is not an orphan, whatever the PVs say.
export class CreateAnswers {
  private readonly last = new Map<string, number>();

  /** Called as CreateVolume returns a volume, new or already there. */
  note(id: string, atMs = Date.now()): void {
    this.last.set(id, atMs);
  }

  /** Wall time of the last answer for `id`, or undefined when none came since the driver started. */
  lastFor(id: string): number | undefined {
    return this.last.get(id);
  }

  /** Drops ids the catalog no longer holds, so the map does not grow with every volume ever made. */
  keepOnly(ids: ReadonlySet<string>): void {
    for (const id of this.last.keys()) if (!ids.has(id)) this.last.delete(id);
  }
}
