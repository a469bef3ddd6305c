import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';

const SECRETS = ['mqtt-pa55word', 'entsoe-t0ken-abc', 'mg_abcdefghij_s3cr3tt0ken'];

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, logger: createLogger('trace', stream) };
}

describe('log redaction at any depth', () => {
  const config = validateConfig(
    {
      organization_id: '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11',
      mqtt: { url: 'mqtts://broker:8883', username: 'gw', password: SECRETS[0] },
      prices: { entsoe: { security_token: SECRETS[1] } },
    },
    'test',
    {},
  );

  it('never writes credentials or tokens, however they are nested', () => {
    const { lines, logger } = capture();
    logger.info({ config }, 'config loaded');
    logger.info({ mqtt: config.mqtt }, 'connecting');
    logger.info({ entsoe: config.prices.entsoe }, 'fetching');
    logger.info({ password: SECRETS[0], token: SECRETS[2] }, 'flat');
    logger.info({ req: { method: 'GET', url: '/api/v1/market_price_forecast', headers: { authorization: `Bearer ${SECRETS[2]}` } } }, 'request');
    logger.info({ headers: { Authorization: `Token ${SECRETS[2]}` } }, 'capitalised header');
    logger.info({ url: `mqtts://gw:${SECRETS[0]}@broker:8883` }, 'url with credentials');
    logger.child({ module: 'uplink' }).warn({ options: { username: 'gw', password: SECRETS[0] } }, 'mqtt options');
    const text = lines.join('\n');
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    expect(text).toContain('[redacted]');
    // what is not secret stays readable
    expect(text).toContain('mqtts://broker:8883');
    expect(text).toContain('"username":"gw"');
  });

  it('writes levels by name and drops what is below the level', () => {
    const lines: string[] = [];
    const logger = createLogger(
      'warn',
      new Writable({
        write(chunk, _enc, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    logger.info('hidden');
    logger.warn('shown');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ level: 'warn', msg: 'shown', name: 'metergate' });
  });
});
