// The version Lode reports: package.json's, read beside the compiled code (the image copies it to /app).
import { readFileSync } from 'node:fs';

/** package.json's version, or 0.0.0 when it cannot be read. */
export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}
