// A client that pipelines requests and never reads the answers (issue 20: the HTTP port
// under the same attacks as the OCPP port): the server closes its connection after 32
// unanswered requests (MAX_PIPELINED_REQUESTS) instead of answering every request of a TCP
// read into memory; a client that pipelines a few and reads them gets them all, and the
// server keeps answering others.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHttp, type TestHttp } from '../helpers/http.js';

describe('HTTP: answers a client does not read', () => {
  let http: TestHttp;
  let port: number;
  beforeAll(async () => {
    http = await startTestHttp();
    port = Number(new URL(http.url).port);
  });
  afterAll(async () => {
    await http?.close();
  });

  const one = 'GET /api/v1/openapi.json HTTP/1.1\r\nHost: gateway\r\n\r\n';

  it('5,000 pipelined requests never read: the connection is closed, not answered into memory', async () => {
    // Not read for 2 s, then read: what the server kept for it arrives, then the close.
    const outcome = await new Promise<{ how: string; answers: number }>((resolve) => {
      let answers = 0;
      let tail = '';
      const s = connect(port, '127.0.0.1', () => {
        s.pause();
        s.write(one.repeat(5_000));
        setTimeout(() => s.resume(), 2_000);
      });
      const done = (how: string) => {
        clearTimeout(bound);
        s.destroy();
        resolve({ how, answers });
      };
      const bound = setTimeout(() => done('still open after 60 s'), 60_000);
      s.on('data', (d: Buffer) => {
        const text = tail + d.toString('latin1');
        answers += (text.match(/HTTP\/1\.1 200 OK/g) ?? []).length;
        tail = text.slice(-20);
        if (answers > 1_000) done('still answering');
      });
      s.on('error', () => undefined);
      s.on('close', () => done('closed'));
    });
    expect(outcome.how).toBe('closed');
    expect(outcome.answers).toBeLessThanOrEqual(32);
    expect((await fetch(`${http.url}/healthz`)).status).toBe(200);
  });

  it('three pipelined requests that are read are all answered', async () => {
    const text = await new Promise<string>((resolve, reject) => {
      let got = '';
      const s = connect(port, '127.0.0.1', () => s.write(one.repeat(2) + one.replace('HTTP/1.1\r\n', 'HTTP/1.1\r\nConnection: close\r\n')));
      s.on('data', (d: Buffer) => (got += d.toString('latin1')));
      s.on('error', reject);
      s.on('close', () => resolve(got));
    });
    expect(text.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(3);
  });
});
