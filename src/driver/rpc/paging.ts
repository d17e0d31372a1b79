// Paging of ListVolumes and ListSnapshots: the starting token is the index into the id-ordered list where the next page starts.
import { aborted, invalidArgument } from './errors.js';
import { printable } from './printable.js';

/** One page of `all` (already filtered and ordered), and the token of the next one ('' at the end). */
export function pageOf<T>(all: readonly T[], maxEntries: number, startingToken: string, what: string): { page: T[]; nextToken: string } {
  if (maxEntries < 0) throw invalidArgument('max_entries must not be negative');
  let start = 0;
  if (startingToken !== '') {
    if (!/^\d+$/.test(startingToken) || Number(startingToken) > all.length) {
      throw aborted(`starting_token "${printable(startingToken)}" is not valid (the ${what} list may have changed)`);
    }
    start = Number(startingToken);
  }
  const end = maxEntries > 0 ? Math.min(all.length, start + maxEntries) : all.length;
  return { page: all.slice(start, end), nextToken: end < all.length ? String(end) : '' };
}
