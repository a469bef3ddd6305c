import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/**
 * Paths whose values never reach a log line: credentials, tokens and the
 * Authorization header of HTTP requests.
 */
export const REDACTED_PATHS = [
  'password',
  '*.password',
  'token',
  '*.token',
  'security_token',
  '*.security_token',
  '*.*.security_token',
  'authorization',
  'req.headers.authorization',
  'headers.authorization',
  '*.headers.authorization',
];

/** Keys whose values are secrets at any depth (pino's redact paths cannot say "anywhere"). */
const SECRET_KEY = /^(password|passwd|secret|token|security_token|access_token|refresh_token|api_key|apikey|authorization|proxy-authorization|cookie|set-cookie|private_key)$/i;
/** user:password@ in URLs, e.g. mqtts://gw:pw@broker:8883. */
const URL_CREDENTIALS = /(\w+:\/\/[^\s/:@]+:)[^\s/@]+@/g;
const CENSOR = '[redacted]';

/**
 * Redacts secrets in what is about to be logged, at any depth (bounded): values under
 * secret-named keys, and passwords embedded in URLs. Copies only what it changes;
 * leaves Errors and other non-plain objects to pino's serializers.
 */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.includes('@') && value.includes('://') ? value.replace(URL_CREDENTIALS, `$1${CENSOR}@`) : value;
  if (value === null || typeof value !== 'object' || depth > 8) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    value.forEach((item, i) => {
      const r = redactSecrets(item, depth + 1);
      if (r !== item) (out ??= [...value])[i] = r;
    });
    return out ?? value;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  let out: Record<string, unknown> | null = null;
  for (const [k, v] of Object.entries(value)) {
    const r = SECRET_KEY.test(k) && v !== undefined && v !== null ? CENSOR : redactSecrets(v, depth + 1);
    if (r !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = r;
  }
  return out ?? value;
}

export function createLogger(level = 'info', destination?: DestinationStream): Logger {
  return pino(
    {
      name: 'metergate',
      level,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }), log: (object) => redactSecrets(object) as Record<string, unknown> },
    },
    destination,
  );
}
