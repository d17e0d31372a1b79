// Caller-sent text made safe to quote in an error message or a log line.

/** Keeps messages readable when a caller sends odd bytes. */
export function printable(s: string): string {
  const clean = JSON.stringify(s).slice(1, -1);
  return clean.length > 80 ? clean.slice(0, 77) + '...' : clean;
}
