// Frames ocpp-rpc answers by itself as malformed, against `metergate run` (its own process,
// so its memory is its own), from a raw websocket client (ws) that authenticates as a
// configured charger:
//   - calls whose action is not a string, each carrying a 900 kB message id, which the
//     library echoes back in its CallError, sent by a client that never reads: the
//     unread-frames bound must close the connection (it applied to answers to calls only:
//     200 such frames grew the daemon by 232 MB and the connection stayed open);
//   - frames that are not OCPP-J at all, from a client that reads: after a bounded number in
//     a row the connection is closed, and the per-frame warning is not written per frame.
// Prints the daemon's peak RSS growth (VmHWM against its RSS before the frames).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { freePort } from '../../src/free-port.js';
import { MALFORMED_WARNINGS, MAX_BAD_MESSAGES } from '../../src/ocpp/transport.js';
import { centralSystemConfigHead } from '../helpers/central-system-config.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { until } from '../helpers/wait.js';

const PASSWORD = 'frames-password-0123456789';
const basic = (id: string) => `Basic ${Buffer.from(`${id}:${PASSWORD}`).toString('base64')}`;

describe('OCPP frames the library answers itself: bounded like every other frame', () => {
  let dir: string;
  let daemon: DaemonProcess;
  let ports: { ocpp: number; http: number };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'metergate-ocpp-frames-'));
    ports = { ocpp: await freePort(), http: await freePort() };
    const config = join(dir, 'config.yaml');
    writeFileSync(
      config,
      [
        ...centralSystemConfigHead({ dataDir: dir, httpPort: ports.http, ocppPort: ports.ocpp }),
        'chargers:',
        `  - { id: CP-SILENT, password: ${PASSWORD}, auth: accept_all }`,
        `  - { id: CP-GARBLED, password: ${PASSWORD}, auth: accept_all }`,
        '',
      ].join('\n'),
    );
    daemon = await startDaemon(config, { startTimeoutMs: 60_000 });
  }, 90_000);

  afterAll(async () => {
    await daemon?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const pid = () => daemon.process.pid!;
  const statusKb = (field: 'VmRSS' | 'VmHWM') => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid()}/status`, 'utf8'))?.[1]);
  const metrics = async () => (await fetch(`http://127.0.0.1:${ports.http}/metrics`)).text();

  function open(id: string): Promise<WebSocket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${ports.ocpp}/${id}`, ['ocpp1.6'], { headers: { authorization: basic(id) }, maxPayload: 64 * 1024 * 1024 });
      ws.once('open', () => resolve(ws));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade answered ${res.statusCode}`)));
    });
  }

  it('closes a connection that sends calls with a non-string action and a 900 kB message id and reads nothing; the daemon does not grow with them', { timeout: 120_000 }, async () => {
    const ws = await open('CP-SILENT');
    const socket = (ws as unknown as { _socket: Socket })._socket;
    // Never read: what the gateway sends piles up in the kernel's buffers, then in its own.
    socket.pause();
    ws.on('error', () => undefined);
    const gone = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    let closed = false;
    void gone.then(() => (closed = true));
    // The daemon's RSS now, and its peak from now on (VmHWM reset).
    await new Promise((r) => setTimeout(r, 500));
    const beforeKb = statusKb('VmRSS');
    writeFileSync(`/proc/${pid()}/clear_refs`, '5');
    const id = 'i'.repeat(900_000);
    let sent = 0;
    for (; sent < 200 && !closed; sent++) {
      // ocpp-rpc answers it itself: [4, <the 900 kB id>, "RpcFrameworkError", "Method must be a string", {}].
      ws.send(`[2,"${id}${sent}",5,{}]`);
      // Our own send buffer: let it go to the kernel (the gateway reads all it is sent).
      while (socket.writableLength > 4 * 1024 * 1024 && !closed) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 20));
    }
    const bound = new Promise<'open'>((r) => setTimeout(() => r('open'), 20_000));
    const how = await Promise.race([gone.then(() => 'closed' as const), bound]);
    const peakKb = statusKb('VmHWM');
    ws.terminate();
    const growthMb = (peakKb - beforeKb) / 1024;
    console.log(`\n${sent} frames of 900 kB sent before the connection ${how === 'closed' ? 'was closed by the gateway' : 'was still open 20 s after the last'}; daemon RSS ${(beforeKb / 1024).toFixed(1)} MB before, peak ${(peakKb / 1024).toFixed(1)} MB (+${growthMb.toFixed(1)} MB)\n`);
    expect(how, 'the gateway closes the connection').toBe('closed');
    // Each answer is ~900 kB: once the kernel's buffers on both sides are full (about a dozen
    // such frames on loopback here), more than 256 kB unsent closes it at the next frame.
    expect(sent).toBeLessThan(100);
    expect(await metrics()).toMatch(/^metergate_ocpp_connections_refused_total\{reason="unread_answers"\} [1-9]/m);
    // Bounded by the frames that were sent, not by how many the client sends (before: +232 MB for 200).
    expect(growthMb).toBeLessThan(100);
  });

  it('closes a connection after a bounded run of frames that are not OCPP-J, and does not log a warning per frame', { timeout: 60_000 }, async () => {
    const ws = await open('CP-GARBLED');
    ws.on('error', () => undefined);
    const answers: string[] = [];
    ws.on('message', (d: Buffer) => answers.push(d.toString()));
    const closedWith = new Promise<number>((resolve) => ws.once('close', (code: number) => resolve(code)));
    let closed = false;
    void closedWith.then(() => (closed = true));
    const warningsBefore = daemon.output().split('\n').filter((l) => l.includes('malformed OCPP frame')).length;
    let sent = 0;
    for (; sent < 300 && !closed; sent++) {
      const answered = answers.length;
      ws.send(`this is not OCPP-J ${sent}`);
      // One at a time, its CallError (or the close) before the next: how many frames it takes
      // then depends on the gateway's count, not on how fast a loaded daemon reads.
      await until(() => answers.length > answered || closed, `the answer to non-OCPP-J frame ${sent} or the close`);
    }
    const how = await Promise.race([closedWith, new Promise<'open'>((r) => setTimeout(() => r('open'), 15_000))]);
    ws.terminate();
    const warnings = daemon.output().split('\n').filter((l) => l.includes('malformed OCPP frame')).length - warningsBefore;
    console.log(`\n${sent} non-OCPP-J frames sent, ${answers.length} CallErrors back; connection ${how === 'open' ? 'still open' : `closed (${how})`}; ${warnings} warning line(s) logged\n`);
    expect(how, 'the gateway closes the connection').not.toBe('open');
    expect(sent).toBeLessThan(300);
    // The warnings over all connections: a budget a minute (the first test's frames took part of it), plus one line that says how many were left out.
    expect(warnings).toBeLessThanOrEqual(MALFORMED_WARNINGS.perWindow + 1);
    const text = await metrics();
    expect(text).toMatch(/^metergate_ocpp_connections_refused_total\{reason="bad_messages"\} 1$/m);
    // Every one counted: one more than the bound in a row, then closed.
    expect(text).toContain(`metergate_ocpp_malformed_frames_total{charge_point_id="CP-GARBLED"} ${MAX_BAD_MESSAGES + 1}\n`);
  });
});
