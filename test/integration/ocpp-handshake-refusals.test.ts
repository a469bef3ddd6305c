// A refused OCPP handshake tells a LAN peer nothing about which charge point ids exist: an
// unknown id and a known one with a wrong or missing password get byte for byte the same
// answer (401, the same body), in a running gateway (Daemon with its real modules), asked
// by a real websocket client (ws) and by raw upgrade requests. Why each was refused is in
// the gateway's log and /metrics only.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { validateConfig } from '../../src/config/load.js';
import { createContext, Daemon } from '../../src/daemon.js';
import { freePort } from '../../src/free-port.js';
import { createLogger } from '../../src/log.js';

const PASSWORD = 'charger-secret-0123456789';
const basic = (id: string, password: string) => `Basic ${Buffer.from(`${id}:${password}`).toString('base64')}`;

describe('OCPP handshake refusals: no oracle for which charge point ids exist', () => {
  let dir: string;
  let daemon: Daemon;
  let ports: { ocpp: number; http: number };
  const logLines: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'metergate-ocpp-refusals-'));
    ports = { ocpp: await freePort(), http: await freePort() };
    const config = validateConfig(
      {
        organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
        data_dir: join(dir, 'data'),
        log_level: 'info',
        http: { host: '127.0.0.1', port: ports.http },
        prices: { regions: ['NL'], source: 'none' },
        forecast: { enabled: false },
        ocpp: { host: '127.0.0.1', port: ports.ocpp },
        chargers: [{ id: 'CP-KNOWN', password: PASSWORD, auth: 'accept_all' }],
      },
      'test',
      {},
    );
    const ctx = createContext(config, { logger: createLogger('info', { write: (line: string) => void logLines.push(line) }) });
    daemon = new Daemon(ctx);
    await daemon.start();
  }, 60_000);

  afterAll(async () => {
    await daemon?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The whole answer to a raw websocket upgrade for this id, as bytes on the wire. */
  function rawUpgrade(id: string, authorization: string | null): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: ports.ocpp });
      let got = '';
      socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
      socket.on('close', () => resolve(got));
      socket.on('error', reject);
      socket.setTimeout(15_000, () => socket.destroy(new Error('no answer')));
      socket.write(
        [`GET /ocpp/${id} HTTP/1.1`, 'Host: gateway', 'Upgrade: websocket', 'Connection: Upgrade', 'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Protocol: ocpp1.6', ...(authorization ? [`Authorization: ${authorization}`] : []), '', ''].join('\r\n'),
      );
    });
  }

  /** A real websocket client's view of a refused handshake: status and body. */
  function wsRefusal(id: string, password: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${ports.ocpp}/ocpp/${id}`, ['ocpp1.6'], { headers: { authorization: basic(id, password) }, handshakeTimeout: 15_000 });
      ws.once('open', () => reject(new Error(`${id}: connected`)));
      ws.once('error', () => undefined);
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
    });
  }

  it('answers an unknown id exactly as a known id with a wrong or missing password; the log and /metrics tell them apart', async () => {
    const unknown = await rawUpgrade('CP-NOBODY', basic('CP-NOBODY', 'some-guess-0123456789'));
    const wrong = await rawUpgrade('CP-KNOWN', basic('CP-KNOWN', 'some-guess-0123456789'));
    const unknownBare = await rawUpgrade('CP-NOBODY', null);
    const knownBare = await rawUpgrade('CP-KNOWN', null);
    expect(wrong).toMatch(/^HTTP\/1\.1 401 Unauthorized\r\n/);
    expect(unknown).toBe(wrong);
    expect(unknownBare).toBe(wrong);
    expect(knownBare).toBe(wrong);

    const viaWs = [await wsRefusal('CP-NOBODY', 'some-guess-0123456789'), await wsRefusal('CP-KNOWN', 'some-guess-0123456789')];
    expect(viaWs[0]).toEqual({ status: 401, body: 'unauthorized' });
    expect(viaWs[1]).toEqual(viaWs[0]);

    // The right password still connects.
    const ok = new WebSocket(`ws://127.0.0.1:${ports.ocpp}/ocpp/CP-KNOWN`, ['ocpp1.6'], { headers: { authorization: basic('CP-KNOWN', PASSWORD) } });
    await new Promise<void>((resolve, reject) => {
      ok.once('open', () => resolve());
      ok.once('unexpected-response', (_req, res) => reject(new Error(`right password answered ${res.statusCode}`)));
    });
    ok.close();

    // Server side only: why each was refused.
    const log = logLines.join('\n');
    expect(logLines.filter((l) => l.includes('unknown charge point id') && l.includes('CP-NOBODY'))).toHaveLength(3);
    expect(logLines.filter((l) => l.includes('wrong or missing password') && l.includes('CP-KNOWN'))).toHaveLength(3);
    expect(log).not.toContain('some-guess');
    const metrics = await (await fetch(`http://127.0.0.1:${ports.http}/metrics`)).text();
    expect(metrics).toMatch(/^metergate_ocpp_connections_refused_total\{reason="unknown_id"\} 3$/m);
    expect(metrics).toMatch(/^metergate_ocpp_connections_refused_total\{reason="unauthorized"\} 3$/m);
  });
});
