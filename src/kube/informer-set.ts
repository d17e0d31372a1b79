// A feature's caches as one: informers that start, stop and count as synced together.

/** What the set needs of each member (an Informer, or another set). */
export interface Cache {
  start(): void;
  stop(): Promise<void>;
  readonly synced: boolean;
  whenSynced(): Promise<unknown>;
}

/** Base of a feature's caches: a pass runs only when every one of them is whole. */
export class InformerSet implements Cache {
  constructor(private readonly members: readonly Cache[]) {}

  start(): void {
    for (const m of this.members) m.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.members.map((m) => m.stop()));
  }

  get synced(): boolean {
    return this.members.every((m) => m.synced);
  }

  whenSynced(): Promise<unknown> {
    return Promise.all(this.members.map((m) => m.whenSynced()));
  }
}
