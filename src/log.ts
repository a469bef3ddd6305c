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

export function createLogger(level = 'info', destination?: DestinationStream): Logger {
  return pino(
    {
      name: 'metergate',
      level,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}
