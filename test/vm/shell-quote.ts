// Quotes a string for the POSIX shells of the VM's init and job script.
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
