// A backend's health as last checked, answered at once: a check that runs tools (quota reports, LVM) is run again in the background when its answer is old, so Probe, which liveness probes call every few seconds, never waits on a tool.
import { outsideCall } from '../util/call-signal.js';

/** How old an answer may be before a Probe starts a new check (the answer it gets is still the last one). */
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
   * The last answer; one older than the age starts a new check for the next caller. Only the
   * first caller ever, with no answer yet, waits for a check.
   */
  async current(): Promise<string | undefined> {
    if (this.last === undefined) await this.refresh();
    else if (this.now() - this.last.at > this.maxAgeMs) void this.refresh();
    return this.lastProblem();
  }

  private lastProblem(): string | undefined {
    return this.last?.problem;
  }

  /** One check at a time, outside the calling RPC, so a Probe's deadline never cuts it short. */
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
