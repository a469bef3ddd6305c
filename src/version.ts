import { readFileSync } from 'node:fs';

/** The package version, read once from package.json (one level above src/ and dist/). */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Build date: no message may carry a timestamp before it (clock safety on gateways without RTC). */
export const BUILD_DATE_MS = Date.parse('2026-11-01T00:00:00Z');
