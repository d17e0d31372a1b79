// A bearer token for the API, fixed or read from a file that is rotated under the driver (bound service account tokens expire).
import { readFileSync } from 'node:fs';

/**
 * How old a token read from a file may be before it is read again. Kubelet rewrites a
 * projected token well before it expires (at 80% of its life, at least an hour for the
 * default), so reading each minute, as client-go does, never sends an expired one.
 */
export const TOKEN_REREAD_MS = 60_000;

export class BearerToken {
  private cached: string | undefined;
  private readAtMs = 0;

  private constructor(private readonly file: string | undefined, fixed: string | undefined, private readonly now: () => number) {
    this.cached = fixed;
  }

  static fixed(token: string): BearerToken {
    return new BearerToken(undefined, token, Date.now);
  }

  static fromFile(file: string, now: () => number = Date.now): BearerToken {
    return new BearerToken(file, undefined, now);
  }

  /** The token to send now: a file's is read again once TOKEN_REREAD_MS old, or after stale(). */
  value(): string {
    if (this.file !== undefined && (this.cached === undefined || this.now() - this.readAtMs >= TOKEN_REREAD_MS)) {
      let text: string;
      try {
        text = readFileSync(this.file, 'utf8').trim();
      } catch (err) {
        throw new Error(`cannot read the API token file ${this.file}: ${(err as Error).message}`);
      }
      if (text === '') throw new Error(`the API token file ${this.file} is empty`);
      this.cached = text;
      this.readAtMs = this.now();
    }
    return this.cached ?? '';
  }

  /**
   * Called on a 401: a file's token is read again before the next request (it may have been
   * rotated since the last read). True when that gives a different token, worth one retry.
   */
  refreshAfterRejection(): boolean {
    if (this.file === undefined) return false;
    const before = this.cached;
    this.cached = undefined;
    try {
      return this.value() !== before;
    } catch {
      return false;
    }
  }
}
