// A backend's health as last checked, answered at once: a check that runs tools (quota reports, LVM) is run again in the background by the pool's refresh (the capacity timer), so Probe, which liveness probes call every few seconds, never runs a tool.
import { outsideCall } from '../util/call-signal.js';

/** How old an answer may be before the pool's next refresh checks again. */
export const HEALTH_MAX_AGE_MS = 10_000;

export class HealthCache {
  private last: { problem: string | undefined; at: number } | undefined;
  private running: Promise<void> | undefined;

  /** `check` names the problem, or undefined when healthy; a check that throws is a problem with its message. */
  constructor(private readonly check: () => Promise<string | undefined>, private readonly maxAgeMs = HEALTH_MAX_AGE_MS, private readonly now: () => number = Date.now) {}

  /** An answer found elsewhere (the pool's open, which ran the same check), as fresh as now. */
  record(problem: string | undefined): void {
    this.last = { problem, at: this.now() };
  }

  /**
   * The last answer, however old: only the first caller ever, with no answer yet, waits for a
   * check. Nothing here starts one, so a Probe costs no tool run (keepCurrent does, from the
   * pool's refresh: the driver's capacity timer, GetCapacity, a refusal for space).
   */
  async current(): Promise<string | undefined> {
    if (this.last === undefined) await this.refresh();
    return this.last?.problem;
  }

  /** Starts a check in the background when the last answer is older than the age (or there is none); never waits for it. */
  keepCurrent(): void {
    if (this.last === undefined || this.now() - this.last.at > this.maxAgeMs) void this.refresh();
  }

  /** One check at a time, outside any RPC, so no call's deadline cuts it short. */
  refresh(): Promise<void> {
    this.running ??= outsideCall(async () => {
      try {
        this.last = { problem: await this.check(), at: this.now() };
      } catch (err) {
        this.last = { problem: (err as Error).message, at: this.now() };
      } finally {
        this.running = undefined;
      }
    });
    return this.running;
  }
}
