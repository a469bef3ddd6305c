import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { LogProgress, TerminalProgress, progressFor } from '../../src/prices/progress.js';

function sink(isTTY: boolean) {
  let out = '';
  const stream = new Writable({
    write(chunk, _e, cb) {
      out += String(chunk);
      cb();
    },
  }) as unknown as NodeJS.WriteStream;
  (stream as { isTTY?: boolean }).isTTY = isTTY;
  return { stream, text: () => out };
}

describe('backfill progress', () => {
  it('draws a bar in place on a terminal', () => {
    const s = sink(true);
    const p = new TerminalProgress(s.stream);
    p.start(4, 'backfill NL');
    p.advance('NL 2018-01');
    p.advance('NL 2018-02');
    p.finish('done');
    expect(s.text()).toContain('\r\x1b[2Kbackfill NL [###############---------------] 2/4 50% NL 2018-02');
    expect(s.text().endsWith('done\n')).toBe(true);
  });

  it('writes log lines elsewhere', () => {
    const s = sink(false);
    const logger = createLogger('info', s.stream);
    expect(progressFor(logger, s.stream)).toBeInstanceOf(LogProgress);
    const p = progressFor(logger, s.stream);
    p.start(2, 'backfill NL');
    p.advance('NL 2018-01', { periods: 744, fetched: true });
    const lines = s.text().trim().split('\n').map((l) => JSON.parse(l));
    expect(lines[1]).toMatchObject({ msg: 'backfill NL: 1/2', chunk: 'NL 2018-01', periods: 744, fetched: true });
    expect(s.text()).not.toContain('\r');
  });
});
