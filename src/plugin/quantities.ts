// Byte quantities as the API writes them ("16Mi", "1G", "167772160") read into numbers, and printed back the way Lode's messages print sizes.
import { humanBytes, parseBytes } from '../util/quantity.js';

/** Bytes of a quantity, or undefined when absent or not a plain byte quantity (the plugin then shows it as written). */
export function bytesOf(quantity: string | undefined): number | undefined {
  if (quantity === undefined) return undefined;
  try {
    return parseBytes(quantity);
  } catch {
    return undefined;
  }
}

/** "160Mi"; "-" for nothing known. */
export function showBytes(bytes: number | undefined): string {
  return bytes === undefined ? '-' : humanBytes(bytes);
}
