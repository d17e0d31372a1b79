// The waits of a list-and-watch client: how long a watch asks to last, and a pause that ends early when the client stops.

/**
 * As client-go's reflectors do: a watch asks the server to end it after 5 to 10 minutes, at
 * random, so the watches of many nodes started together do not all come back at once.
 */
export function watchTimeoutSeconds(): number {
  return 300 + Math.floor(Math.random() * 300);
}

/** Waits `ms`, or less if `signal` aborts first (it never rejects: a stopping loop just goes on to its check). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Waits for `synced` (caches filling), or less if `signal` aborts first, and takes its abort
 * listener back either way: a leader's passes wait on one long-lived signal, and a listener left
 * per pass piles up for as long as the leader leads. Rejects as `synced` does.
 */
export function untilSynced(synced: Promise<unknown>, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return resolve();
    const stop = (): void => resolve();
    signal.addEventListener('abort', stop, { once: true });
    synced.then(
      () => { signal.removeEventListener('abort', stop); resolve(); },
      (err: unknown) => { signal.removeEventListener('abort', stop); reject(err); },
    );
  });
}
