// The cancellation signal of the call being served, carried across awaits so that every tool started on its behalf dies with it.
import { AsyncLocalStorage } from 'node:async_hooks';

const current = new AsyncLocalStorage<AbortSignal>();

/** Runs `fn` (and everything it awaits or schedules) as part of the call that `signal` ends. */
export function withCallSignal<T>(signal: AbortSignal, fn: () => T): T {
  return current.run(signal, fn);
}

/** The signal of the call this code runs for, or undefined outside any call (start-up, recovery). */
export function callSignal(): AbortSignal | undefined {
  return current.getStore();
}

/**
 * Runs `fn` free of the call's signal: for cleanup that must still happen after the call
 * has given up (undoing a half-made mount), which the dead call would otherwise refuse.
 */
export function outsideCall<T>(fn: () => T): T {
  return current.exit(fn);
}
