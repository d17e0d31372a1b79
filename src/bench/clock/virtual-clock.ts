// The bench's virtual clock: controller timers wait on it, and it only moves when the runtime says everything is idle.

/** A pending timer. */
interface Timer {
  id: number;
  due: number;
  seq: number;
  callback: () => void;
}

/** Wall-clock epoch of virtual time 0, fixed so timestamps are the same on every run. */
export const VIRTUAL_EPOCH_MS = Date.UTC(2026, 0, 1, 0, 0, 0);

/**
 * Time that advances only when told to. Timers due at the same instant fire in the
 * order they were set, which keeps runs with the same inputs identical.
 */
export class VirtualClock {
  private nowMs = 0;
  private seq = 0;
  private readonly timers = new Map<number, Timer>();

  /**
   * Added to every time the Kubernetes API shows, never to what is stored or reported:
   * kubectl measures some ages against its own wall clock, which a fixed epoch (and the
   * scripted steps' jumps ahead) would put months off or in the future.
   */
  displayShiftMs = 0;

  /** Milliseconds since the start of the run. */
  now(): number {
    return this.nowMs;
  }

  /** The current instant as a Date, for object timestamps. */
  date(): Date {
    return new Date(VIRTUAL_EPOCH_MS + this.nowMs);
  }

  /** Sets the display shift so that the API's now is the wall clock's now. */
  alignDisplayToWall(): void {
    this.displayShiftMs = Date.now() - this.date().getTime();
  }

  /** Calls `callback` once `delayMs` of virtual time have passed; returns an id for cancel(). */
  setTimer(delayMs: number, callback: () => void): number {
    const id = ++this.seq;
    this.timers.set(id, { id, due: this.nowMs + Math.max(0, delayMs), seq: id, callback });
    return id;
  }

  cancel(id: number | undefined): void {
    if (id !== undefined) this.timers.delete(id);
  }

  /** When the earliest timer is due, or undefined when none is set. */
  nextDue(): number | undefined {
    let best: number | undefined;
    for (const t of this.timers.values()) if (best === undefined || t.due < best) best = t.due;
    return best;
  }

  /** Fires every timer due at or before now, in (due, creation) order; returns how many fired. */
  fireDue(): number {
    const due = [...this.timers.values()].filter((t) => t.due <= this.nowMs).sort((a, b) => a.due - b.due || a.seq - b.seq);
    for (const t of due) {
      this.timers.delete(t.id);
      t.callback();
    }
    return due.length;
  }

  /** Moves time forward to `ms` (never back). */
  advanceTo(ms: number): void {
    if (ms > this.nowMs) this.nowMs = ms;
  }
}

/** "1m30s", "250ms", "2h0m5s": a virtual duration the way kubectl prints ages. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const totalS = ms / 1000;
  if (totalS < 60) return `${Number.isInteger(totalS) ? totalS : totalS.toFixed(1)}s`;
  const h = Math.floor(totalS / 3600);
  const m = Math.floor((totalS % 3600) / 60);
  const s = Math.round(totalS % 60);
  return h > 0 ? `${h}h${m}m${s}s` : `${m}m${s}s`;
}

/** Parses "30s", "5m", "1h", "250ms" or a bare number of seconds into milliseconds. */
export function parseDuration(input: string | number): number {
  if (typeof input === 'number') return input * 1000;
  const parts = /^(?:([0-9.]+)h)?(?:([0-9.]+)m(?!s))?(?:([0-9.]+)s)?(?:([0-9.]+)ms)?$/.exec(input.trim());
  if (parts === null || input.trim() === '') throw new Error(`invalid duration "${input}"`);
  const [, h, m, s, msPart] = parts;
  return (Number(h ?? 0) * 3600 + Number(m ?? 0) * 60 + Number(s ?? 0)) * 1000 + Number(msPart ?? 0);
}
