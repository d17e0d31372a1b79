// Structured JSON logging to stderr: one object per line, so log shippers need no parsing rules.
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
let threshold: LogLevel = 'info';

export function setLogLevel(level: LogLevel): void {
  threshold = level;
}

export function isLogLevel(value: string): value is LogLevel {
  return value in ORDER;
}

/** Whether a line at `level` is written: callers skip building the fields of one that is not. */
export function logEnabled(level: LogLevel): boolean {
  return ORDER[level] >= ORDER[threshold];
}

export function log(level: LogLevel, msg: string, fields: Record<string, unknown> = {}): void {
  if (ORDER[level] < ORDER[threshold]) return;
  process.stderr.write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }) + '\n');
}
