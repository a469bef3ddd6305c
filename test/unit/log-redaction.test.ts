import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';

describe('log redaction', () => {
  it('never writes Authorization headers or tokens', () => {
    const lines: string[] = [];
    const sink = new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } });
    const logger = createLogger('info', sink);
    const secret = 'mg_abcdefghij_SECRETSECRETSECRETSECRETSECRETSECRETSECRE';
    logger.info({ req: { headers: { authorization: `Token ${secret}` } } }, 'request');
    logger.info({ headers: { authorization: `Bearer ${secret}` } }, 'request');
    logger.info({ token: secret }, 'created');
    logger.info({ http: { token: secret } }, 'created');
    expect(lines).toHaveLength(4);
    expect(lines.join('')).not.toContain('SECRET');
  });
});
