// What an attacker on the site LAN can send a running gateway (issue 20): the OCPP port
// (malformed and over-long paths, bad subprotocols and auth headers, oversized frames,
// invalid JSON, wrong message types, unknown actions, schema-violating payloads, a burst
// of calls, a client that never reads, slow-loris upgrades, idle sockets) and the HTTP
// API port (the same kinds). Each attack runs once and returns what it saw; it never
// throws for what the gateway does (a refusal, a closed socket) and never waits longer
// than its own bound. Used by test/integration/ocpp-fuzz.test.ts and
// scripts/bench/ocpp-attack-rss.ts.
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import WebSocket from 'ws';

export interface AttackTarget {
  readonly host: string;
  readonly ocppPort: number;
  readonly httpPort: number;
  /** A configured charge point the attacker knows the password of (the attacks after the handshake). */
  readonly chargerId: string;
  readonly password: string;
  /** A source address that is not loopback, for the attacks that fail handshakes (the gateway slows that address down). */
  readonly lanAddress: string | null;
  /** The subprotocol the attacks after the handshake offer (default ocpp1.6; OCPP201_ATTACKS: ocpp2.0.1). */
  readonly subprotocol?: 'ocpp1.6' | 'ocpp2.0.1';
}

export interface AttackResult {
  /** Short account: counts of the answers it got. */
  readonly seen: string;
}

export interface Attack {
  readonly name: string;
  readonly port: 'ocpp' | 'http';
  run(t: AttackTarget): Promise<AttackResult>;
  /** OCPP201_ATTACKS: the name of the 1.6 attack it runs beside (the same window, at the same time). */
  readonly beside?: string;
  /** What the attacker must have seen (the gateway's answers, as `seen` tells them). */
  readonly mustSee?: RegExp;
}

/** A non-loopback IPv4 address of this machine, or null. */
export function lanAddress(): string | null {
  return (
    Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal)?.address ?? null
  );
}

const tally = (xs: ReadonlyArray<string | number>) => {
  const counts = new Map<string, number>();
  for (const x of xs) counts.set(String(x), (counts.get(String(x)) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${k}×${n}`).join(' ');
};

const basic = (id: string, password: string | Buffer) => `Basic ${Buffer.concat([Buffer.from(`${id}:`), Buffer.from(password)]).toString('base64')}`;

/** A raw request (an upgrade when `upgrade`), as bytes; resolves with the status line's code, 'closed' or 'timeout'. */
function rawRequest(t: AttackTarget, port: number, lines: string[], opts: { body?: Buffer; localAddress?: string; timeoutMs?: number } = {}): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: t.host, port, ...(opts.localAddress ? { localAddress: opts.localAddress } : {}) });
    let got = '';
    const done = (what: string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(what);
    };
    const timer = setTimeout(() => done('timeout'), opts.timeoutMs ?? 15_000);
    socket.on('connect', () => {
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (opts.body) socket.write(opts.body);
    });
    socket.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
      if (m) done(m[1]!);
    });
    socket.on('error', () => done('closed'));
    socket.on('close', () => done(got === '' ? 'closed' : got.slice(0, 12)));
  });
}

function upgradeLines(path: string, headers: Record<string, string>): string[] {
  const all: Record<string, string> = { Host: 'gateway', Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': randomBytes(16).toString('base64'), ...headers };
  return [`GET ${path} HTTP/1.1`, ...Object.entries(all).map(([k, v]) => `${k}: ${v}`)];
}

/** An authenticated raw websocket of the attacker's charger (no ocpp-rpc on our side: anything can be sent). */
export function openRawCharger(t: AttackTarget, opts: { maxPayload?: number } = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://${t.host}:${t.ocppPort}/${t.chargerId}`, [t.subprotocol ?? 'ocpp1.6'], { headers: { authorization: basic(t.chargerId, t.password) }, maxPayload: opts.maxPayload ?? 64 * 1024 * 1024, handshakeTimeout: 15_000 });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade answered ${res.statusCode}`)));
  });
}

/** Sends frames on an authenticated raw websocket; collects the answers until every call is answered, the socket closes, or the bound. */
async function sendFrames(t: AttackTarget, frames: ReadonlyArray<string | Buffer>, expectAnswers: number, timeoutMs = 20_000): Promise<AttackResult> {
  const ws = await openRawCharger(t);
  const answers: string[] = [];
  let closeCode: number | null = null;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      resolve();
    };
    ws.on('message', (data: Buffer) => {
      try {
        const msg = JSON.parse(data.toString()) as unknown[];
        answers.push(msg[0] === 4 ? `CallError:${String(msg[2])}` : msg[0] === 3 ? 'CallResult' : `type ${String(msg[0])}`);
      } catch {
        answers.push('unparsable');
      }
      if (answers.length >= expectAnswers) finish();
    });
    ws.on('close', (code: number) => {
      closeCode = code;
      finish();
    });
    ws.on('error', () => undefined);
    for (const f of frames) ws.send(f);
    if (expectAnswers === 0) setTimeout(finish, 500);
  });
  ws.terminate();
  return { seen: `${tally(answers) || 'no answer'}${closeCode !== null ? `; closed ${closeCode}` : ''}` };
}

const call = (id: string, action: string, params: unknown) => JSON.stringify([2, id, action, params]);

/** Keeps opening sockets that trickle an upgrade's headers one byte a second; resolves when the gateway has closed them all (or the bound). */
function slowLoris(t: AttackTarget, port: number, sockets: number, firstLine: string, boundMs: number): Promise<AttackResult> {
  return new Promise((resolve) => {
    const started = Date.now();
    const closedAfterMs: number[] = [];
    const open: Socket[] = [];
    const trickle = 'X-Slow: ' + 'a'.repeat(10_000);
    for (let i = 0; i < sockets; i++) {
      const s = connect({ host: t.host, port });
      open.push(s);
      let at = 0;
      let timer: NodeJS.Timeout | null = null;
      s.on('connect', () => {
        s.write(`${firstLine}\r\nHost: gateway\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n`);
        timer = setInterval(() => {
          if (!s.destroyed && at < trickle.length) s.write(trickle[at++]!);
        }, 1_000);
      });
      s.on('error', () => undefined);
      s.on('close', () => {
        if (timer) clearInterval(timer);
        closedAfterMs.push(Date.now() - started);
        if (closedAfterMs.length === sockets) finish();
      });
    }
    const bound = setTimeout(() => finish(), boundMs);
    let finished = false;
    function finish() {
      if (finished) return;
      finished = true;
      clearTimeout(bound);
      const closed = closedAfterMs.length;
      for (const s of open) s.destroy();
      const last = closed > 0 ? Math.max(...closedAfterMs) : null;
      resolve({ seen: `${closed}/${sockets} cut off by the gateway${last !== null ? `, the last after ${(last / 1000).toFixed(1)} s` : ''}` });
    }
  });
}

/** Sends as fast as it can without ever reading; resolves when the gateway closes it (or the bound), with how much it sent. */
function neverReads(t: AttackTarget, boundMs: number): Promise<AttackResult> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://${t.host}:${t.ocppPort}/${t.chargerId}`, [t.subprotocol ?? 'ocpp1.6'], { headers: { authorization: basic(t.chargerId, t.password) } });
    ws.once('error', () => undefined);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade answered ${res.statusCode}`)));
    ws.once('open', () => {
      // Stop reading: the answers pile up in the kernel's buffers, then in the gateway's.
      (ws as unknown as { _socket: Socket })._socket.pause();
      const started = Date.now();
      let sent = 0;
      let closed: number | null = null;
      ws.once('close', (code: number) => (closed = code));
      const socket = (ws as unknown as { _socket: Socket })._socket;
      socket.once('close', () => (closed ??= 1006));
      const pump = () => {
        if (closed !== null || Date.now() - started > boundMs) {
          ws.terminate();
          resolve({ seen: `${sent.toLocaleString('en-US')} Heartbeats sent unread in ${((Date.now() - started) / 1000).toFixed(1)} s; ${closed !== null ? 'closed by the gateway' : 'still open at the bound'}` });
          return;
        }
        for (let i = 0; i < 500; i++) ws.send(call(`n${sent++}`, 'Heartbeat', {}));
        // Our own send buffer: let it drain to the kernel before piling more on.
        if (socket.writableLength > 4 * 1024 * 1024) setTimeout(pump, 20);
        else setImmediate(pump);
      };
      pump();
    });
  });
}

/** An HTTP request with a body; the status, or 'closed'. */
function httpRequest(t: AttackTarget, method: string, path: string, headers: Record<string, string>, body?: string | Buffer): Promise<string> {
  return new Promise((resolve) => {
    const req = request({ host: t.host, port: t.httpPort, method, path, headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(String(res.statusCode)));
      res.on('error', () => resolve('closed'));
    });
    req.setTimeout(20_000, () => req.destroy());
    req.on('error', () => resolve('closed'));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const ocppPaths = ['/ocpp/%E0%A4%A', '/%', '/ocpp/%C0%80', '/ocpp/%ZZ', '/ocpp/%00', '/ocpp/%F0%9F%98', '/%E0%A4%A?x=%', '/ocpp/%%', '/ocpp/%2F%2E%2E', '//', '/ocpp/%u0041'];

export const OCPP_ATTACKS: readonly Attack[] = [
  {
    name: 'malformed percent-encodings in the upgrade path',
    port: 'ocpp',
    async run(t) {
      const out = await Promise.all(ocppPaths.map((p) => rawRequest(t, t.ocppPort, upgradeLines(p, { 'Sec-WebSocket-Protocol': 'ocpp1.6', Authorization: basic(t.chargerId, t.password) }))));
      return { seen: tally(out) };
    },
  },
  {
    name: 'over-long paths (2 kB, 20 kB, 1,000 segments)',
    port: 'ocpp',
    async run(t) {
      const paths = [`/ocpp/${'x'.repeat(2_000)}`, `/ocpp/${'y'.repeat(20_000)}`, `${'/a'.repeat(1_000)}/${t.chargerId}`, `/${'%41'.repeat(3_000)}`];
      const out = await Promise.all(paths.map((p) => rawRequest(t, t.ocppPort, upgradeLines(p, { 'Sec-WebSocket-Protocol': 'ocpp1.6', Authorization: basic(t.chargerId, t.password) }))));
      return { seen: tally(out) };
    },
  },
  {
    name: 'bad and missing subprotocols',
    port: 'ocpp',
    async run(t) {
      // Not ocpp2.0.1: the gateway speaks it (an upgrade with it would replace the charger's connection).
      const offers: Array<string | null> = [null, 'ocpp2.1', 'ocpp1.6x', 'OCPP1.6', 'ocpp2.0', ',,,', 'x'.repeat(4_000), 'ocpp1.5, ocpp2.1'];
      const out = await Promise.all(
        offers.map((o) => rawRequest(t, t.ocppPort, upgradeLines(`/ocpp/${t.chargerId}`, { ...(o === null ? {} : { 'Sec-WebSocket-Protocol': o }), Authorization: basic(t.chargerId, t.password) }))),
      );
      return { seen: tally(out) };
    },
  },
  {
    name: 'bad and missing auth headers (from a LAN address)',
    port: 'ocpp',
    async run(t) {
      const auths: Array<string | null> = [
        null,
        'Basic',
        'Basic !!!!',
        'Bearer abc',
        basic(t.chargerId, 'wrong-password-0123456789'),
        basic('CP-NOBODY', t.password),
        basic(t.chargerId, ''),
        `Basic ${'A'.repeat(12_000)}`,
        basic(`${t.chargerId}:x`, t.password),
        ...Array.from({ length: 30 }, (_, i) => basic(t.chargerId, `guess-${i}-0123456789abcdef`)),
      ];
      const localAddress = t.lanAddress ?? undefined;
      const out: string[] = [];
      for (const a of auths) out.push(await rawRequest(t, t.ocppPort, upgradeLines(`/ocpp/${t.chargerId}`, { 'Sec-WebSocket-Protocol': 'ocpp1.6', ...(a === null ? {} : { Authorization: a }) }), { localAddress }));
      return { seen: tally(out) };
    },
  },
  {
    name: 'oversized frames (2 MiB, 16 MiB)',
    port: 'ocpp',
    async run(t) {
      const results: string[] = [];
      for (const size of [2 * 1024 * 1024, 16 * 1024 * 1024]) {
        const params = { chargePointVendor: 'v', chargePointModel: 'm', firmwareVersion: 'f'.repeat(size) };
        results.push((await sendFrames(t, [call('big', 'BootNotification', params)], 1, 20_000)).seen);
      }
      return { seen: results.join(' | ') };
    },
  },
  {
    name: 'invalid JSON frames',
    port: 'ocpp',
    async run(t) {
      const frames: Array<string | Buffer> = ['{', 'null', '[', '[2,"a"', 'true', '"x"', '{"a":1}', '[2,"a","Heartbeat",{]', `${'['.repeat(5_000)}${']'.repeat(5_000)}`, randomBytes(300), Buffer.from([0xff, 0xfe, 0xfd]), '\u0000', ''];
      return sendFrames(t, frames, frames.length);
    },
  },
  {
    name: 'wrong message type ids',
    port: 'ocpp',
    async run(t) {
      const frames = [
        JSON.stringify([7, '1', 'Heartbeat', {}]),
        JSON.stringify([0, '2', 'Heartbeat', {}]),
        JSON.stringify([-1, '3', 'Heartbeat', {}]),
        JSON.stringify(['2', '4', 'Heartbeat', {}]),
        JSON.stringify([2.5, '5', 'Heartbeat', {}]),
        JSON.stringify([2, 6, 'Heartbeat', {}]),
        JSON.stringify([2, null, 'Heartbeat', {}]),
        JSON.stringify([3, 'never-asked', {}]),
        JSON.stringify([4, 'never-asked', 'GenericError', 'x', {}]),
        JSON.stringify([]),
        JSON.stringify([2]),
        JSON.stringify([1e308, '8', 'Heartbeat', {}]),
      ];
      // Results and errors for calls never made get no answer; the rest a CallError.
      return sendFrames(t, frames, frames.length - 2, 5_000);
    },
  },
  {
    name: 'unknown actions',
    port: 'ocpp',
    async run(t) {
      const actions = ['FooBar', '__proto__', 'constructor', 'toString', 'hasOwnProperty', '', 'x'.repeat(1_000), 'Heartbeat ', 'heartbeat', 'SetChargingProfile', 'DataTransfer2'];
      return sendFrames(t, actions.map((a, i) => call(`u${i}`, a, {})), actions.length);
    },
  },
  {
    name: 'schema-violating payloads (meterStart -5, connectorId -1, 300-char idTag, status "Whatever", …)',
    port: 'ocpp',
    async run(t) {
      const ts = new Date().toISOString();
      const calls: Array<[string, unknown]> = [
        ['StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: -5, timestamp: ts }],
        ['StartTransaction', { connectorId: -1, idTag: 'TAG', meterStart: 5, timestamp: ts }],
        ['StartTransaction', { connectorId: 1, idTag: 'T'.repeat(300), meterStart: 5, timestamp: ts }],
        ['StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 5, timestamp: 'yesterday' }],
        ['StopTransaction', { transactionId: 1, meterStop: -1e20, timestamp: ts }],
        ['StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Whatever' }],
        ['MeterValues', { connectorId: 1, meterValue: 'not a list' }],
        ['MeterValues', { connectorId: 1, meterValue: [{ timestamp: ts, sampledValue: [{ value: 'NaN' }] }] }],
        ['BootNotification', { chargePointVendor: 'v'.repeat(100), chargePointModel: 'm' }],
        ['BootNotification', null],
        ['BootNotification', []],
        ['Heartbeat', { extra: 1 }],
        ['Authorize', { idTag: { nested: true } }],
      ];
      return sendFrames(t, calls.map(([a, p], i) => call(`s${i}`, a, p)), calls.length);
    },
  },
  {
    name: '1,000 calls in a burst',
    port: 'ocpp',
    async run(t) {
      return sendFrames(t, Array.from({ length: 1_000 }, (_, i) => call(`b${i}`, 'Heartbeat', {})), 1_000, 60_000);
    },
  },
  {
    name: 'a client that never reads its answers',
    port: 'ocpp',
    run: (t) => neverReads(t, 20_000),
  },
  {
    name: 'a client that never reads, 25 calls of 900 kB echoed back in CallErrors',
    port: 'ocpp',
    async run(t) {
      // Fewer calls than the in-flight bound, each answer as large as its call (ocpp-rpc echoes
      // the params of a call that fails validation): the unread-answers bound must close it.
      const ws = await openRawCharger(t);
      (ws as unknown as { _socket: Socket })._socket.pause();
      const big = call('x', 'StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Available', info: 'i'.repeat(900_000) });
      let closed: number | null = null;
      ws.on('error', () => undefined);
      const socket = (ws as unknown as { _socket: Socket })._socket;
      const gone = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      ws.once('close', (code: number) => (closed = code));
      for (let i = 0; i < 25 && !socket.destroyed; i++) {
        ws.send(big.replace('"x"', `"e${i}"`));
        await new Promise((r) => setTimeout(r, 200));
      }
      const bound = new Promise<'bound'>((r) => setTimeout(() => r('bound'), 15_000));
      const how = await Promise.race([gone.then(() => 'closed' as const), bound]);
      ws.terminate();
      return { seen: how === 'closed' ? `closed by the gateway${closed !== null ? ` (${closed})` : ''}` : 'still open at the bound' };
    },
  },
  {
    name: 'slow-loris upgrades (50 sockets, a header byte a second)',
    port: 'ocpp',
    run: (t) => slowLoris(t, t.ocppPort, 50, `GET /ocpp/${t.chargerId} HTTP/1.1`, 40_000),
  },
  {
    name: '300 idle sockets',
    port: 'ocpp',
    async run(t) {
      return new Promise((resolve) => {
        const sockets: Socket[] = [];
        let closed = 0;
        for (let i = 0; i < 300; i++) {
          const s = connect({ host: t.host, port: t.ocppPort });
          s.on('error', () => undefined);
          s.on('close', () => {
            closed += 1;
            if (closed === 300) finish();
          });
          sockets.push(s);
        }
        const started = Date.now();
        const bound = setTimeout(finish, 30_000);
        function finish() {
          clearTimeout(bound);
          const n = closed;
          for (const s of sockets) s.destroy();
          resolve({ seen: `${n}/300 closed by the gateway within ${((Date.now() - started) / 1000).toFixed(1)} s` });
        }
      });
    },
  },
];

export const HTTP_ATTACKS: readonly Attack[] = [
  {
    name: 'HTTP: malformed and over-long paths and percent-encodings',
    port: 'http',
    async run(t) {
      const paths = ['/api/v1/cdrs/%E0%A4%A', '/%', '/api/v1/chargers/%ZZ/connectors/1/plan', '/api/v1/sessions/%00', `/api/v1/cdrs/${'x'.repeat(2_000)}`, `/${'y'.repeat(20_000)}`, '/healthz/%C0%80', '/..%2F..%2Fetc%2Fpasswd', '/status.json?%'];
      const out = await Promise.all(paths.map((p) => rawRequest(t, t.httpPort, [`GET ${p} HTTP/1.1`, 'Host: gateway', 'Authorization: Token mg_x_y', 'Connection: close'])));
      return { seen: tally(out) };
    },
  },
  {
    name: 'HTTP: bad auth headers, invalid JSON, oversized bodies',
    port: 'http',
    async run(t) {
      const out: string[] = [];
      for (const auth of ['', 'Token', 'Token mg_aaaaaaaaaa_bbbb', `Token ${'a'.repeat(8_000)}`, 'Bearer x', 'Basic YTpi']) out.push(await httpRequest(t, 'GET', '/api/v1/cdrs/x', auth ? { authorization: auth } : {}));
      for (const body of ['{', '[1,2', '{"a":NaN}', `${'['.repeat(5_000)}${']'.repeat(5_000)}`, randomBytes(500).toString('latin1')]) {
        out.push(await httpRequest(t, 'POST', '/api/v1/cdrs/meter_readings', { 'content-type': 'application/json', authorization: 'Token mg_x_y' }, body));
      }
      out.push(await httpRequest(t, 'POST', '/api/v1/cdrs/meter_readings', { 'content-type': 'application/json' }, Buffer.alloc(20 * 1024 * 1024, 0x20)));
      return { seen: tally(out) };
    },
  },
  {
    name: 'HTTP: 1,000 requests in a burst',
    port: 'http',
    async run(t) {
      const out = await Promise.all(Array.from({ length: 1_000 }, (_, i) => httpRequest(t, 'GET', i % 2 ? '/healthz' : '/api/v1/cdrs/nope', {})));
      return { seen: tally(out) };
    },
  },
  {
    name: 'HTTP: a client that never reads (5,000 pipelined requests)',
    port: 'http',
    async run(t) {
      // Not read for 5 s; then read to see how much the gateway had kept for it: all 5,000
      // answers (450 MB of openapi.json), or what it wrote before it closed the connection.
      return new Promise((resolve) => {
        const s = connect({ host: t.host, port: t.httpPort });
        let bytes = 0;
        let answers = 0;
        let tail = '';
        s.on('error', () => undefined);
        s.on('connect', () => {
          s.pause();
          s.write('GET /api/v1/openapi.json HTTP/1.1\r\nHost: gateway\r\n\r\n'.repeat(5_000));
          setTimeout(() => s.resume(), 5_000);
        });
        s.on('data', (d: Buffer) => {
          bytes += d.length;
          const text = tail + d.toString('latin1');
          answers += (text.match(/HTTP\/1\.1 200 OK/g) ?? []).length;
          tail = text.slice(-20);
          if (answers >= 1_000) finish('still answering');
        });
        const bound = setTimeout(() => finish('still open at the bound'), 60_000);
        s.on('close', () => finish('closed by the gateway'));
        function finish(why: string) {
          clearTimeout(bound);
          s.destroy();
          resolve({ seen: `${why} after ${answers} answers (${(bytes / 1e6).toFixed(1)} MB)` });
        }
      });
    },
  },
  {
    name: 'HTTP: slow-loris (50 sockets, a header byte a second)',
    port: 'http',
    run: (t) => slowLoris(t, t.httpPort, 50, 'GET /healthz HTTP/1.1', 40_000),
  },
];

/**
 * The same attacks after the handshake on a connection that speaks OCPP 2.0.1 (target with
 * `subprotocol: 'ocpp2.0.1'` and a charger id of its own), in 2.0.1's shape: each runs beside
 * the 1.6 attack it names (`beside`), in the same window, so the campaign covers both
 * versions without more wall time. The handshake attacks (paths, subprotocols, auth
 * headers, slow-loris, idle sockets) come before a version is agreed and are not repeated.
 */
export const OCPP201_ATTACKS: readonly Attack[] = [
  {
    name: '2.0.1: oversized frames (2 MiB, 16 MiB BootNotification)',
    beside: 'oversized frames (2 MiB, 16 MiB)',
    port: 'ocpp',
    mustSee: /^no answer; closed 1009 \| no answer; closed 1009$/,
    async run(t) {
      const results: string[] = [];
      for (const size of [2 * 1024 * 1024, 16 * 1024 * 1024]) {
        const params = { reason: 'PowerUp', chargingStation: { vendorName: 'v', model: 'm', firmwareVersion: 'f'.repeat(size) } };
        results.push((await sendFrames(t, [call('big', 'BootNotification', params)], 1, 20_000)).seen);
      }
      return { seen: results.join(' | ') };
    },
  },
  {
    name: '2.0.1: invalid JSON frames',
    beside: 'invalid JSON frames',
    port: 'ocpp',
    mustSee: /^CallError:RpcFrameworkError×9$/,
    async run(t) {
      const frames: Array<string | Buffer> = ['{', 'null', '[', '[2,"a"', '[2,"a","TransactionEvent",{]', `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`, randomBytes(300), Buffer.from([0xc3, 0x28]), '\u0000'];
      return sendFrames(t, frames, frames.length, 5_000);
    },
  },
  {
    name: '2.0.1: wrong message types (2.1\'s SEND and CALLRESULTERROR) and oversized message ids',
    beside: 'wrong message type ids',
    port: 'ocpp',
    async run(t) {
      const frames = [
        JSON.stringify([5, '1', 'NotifyPeriodicEventStream', {}]),
        JSON.stringify([6, '2', 'GenericError', 'x', {}]),
        JSON.stringify([7, '3', 'Heartbeat', {}]),
        JSON.stringify(['2', '4', 'Heartbeat', {}]),
        JSON.stringify([2, { id: 5 }, 'Heartbeat', {}]),
        JSON.stringify([3, 'never-asked', {}]),
        // OCPP-J 2.0.1 §4.1.4: a message id is at most 36 characters.
        JSON.stringify([2, 'i'.repeat(10_000), 'Heartbeat', {}]),
        JSON.stringify([2, 'j'.repeat(37), 'Heartbeat', {}]),
      ];
      // The answer to a call never made gets no answer; the rest one each.
      return sendFrames(t, frames, frames.length - 1, 5_000);
    },
  },
  {
    name: '2.0.1: unknown actions (1.6\'s, 2.1\'s, none)',
    beside: 'unknown actions',
    port: 'ocpp',
    mustSee: /^CallError:NotImplemented×12$/,
    async run(t) {
      const actions = ['StartTransaction', 'StopTransaction', 'MeterValues1', 'DiagnosticsStatusNotification', 'NotifyPeriodicEventStream', 'FooBar', '__proto__', 'constructor', '', 'x'.repeat(1_000), 'transactionevent', 'TransactionEvent '];
      return sendFrames(t, actions.map((a, i) => call(`u${i}`, a, {})), actions.length);
    },
  },
  {
    name: '2.0.1: schema-violating payloads and oversized ids (transactionId of 37 and 10,000 characters, evse.id 2^40, seqNo -1, a 1,000-character idToken, connectorStatus "Whatever", …)',
    beside: 'schema-violating payloads (meterStart -5, connectorId -1, 300-char idTag, status "Whatever", …)',
    port: 'ocpp',
    // Every one refused (none stored); none answered as if it were valid.
    mustSee: /^(CallError:\w+×\d+ ?)+$/,
    async run(t) {
      const ts = new Date().toISOString();
      const tx = (over: Record<string, unknown>) => ({ eventType: 'Started', timestamp: ts, triggerReason: 'Authorized', seqNo: 0, transactionInfo: { transactionId: 'fuzz-tx' }, evse: { id: 1, connectorId: 1 }, ...over });
      const register = (value: unknown, unitOfMeasure: Record<string, unknown> = { unit: 'Wh' }) => [{ timestamp: ts, sampledValue: [{ value, measurand: 'Energy.Active.Import.Register', unitOfMeasure }] }];
      const calls: Array<[string, unknown]> = [
        ['TransactionEvent', tx({ transactionInfo: { transactionId: 'x'.repeat(37) } })],
        ['TransactionEvent', tx({ transactionInfo: { transactionId: 'y'.repeat(10_000) } })],
        ['TransactionEvent', tx({ evse: { id: 2 ** 40 } })],
        ['TransactionEvent', tx({ evse: { id: -1 } })],
        ['TransactionEvent', tx({ seqNo: -1 })],
        ['TransactionEvent', tx({ eventType: 'Paused' })],
        ['TransactionEvent', tx({ timestamp: 'yesterday' })],
        ['TransactionEvent', tx({ idToken: { idToken: 'T'.repeat(1_000), type: 'ISO14443' } })],
        ['TransactionEvent', tx({ meterValue: register('12') })],
        ['TransactionEvent', tx({ meterValue: register(1e308, { unit: 'Wh', multiplier: 9 }) })],
        ['TransactionEvent', tx({ meterValue: [] })],
        ['TransactionEvent', { eventType: 'Updated', timestamp: ts }],
        ['StatusNotification', { timestamp: ts, connectorStatus: 'Whatever', evseId: 1, connectorId: 1 }],
        ['StatusNotification', { timestamp: ts, connectorStatus: 'Available', evseId: 2 ** 40, connectorId: 1 }],
        ['BootNotification', { reason: 'Bored', chargingStation: { vendorName: 'v', model: 'm' } }],
        ['BootNotification', { reason: 'PowerUp', chargingStation: { vendorName: 'v'.repeat(51), model: 'm' } }],
        ['BootNotification', null],
        ['Heartbeat', { extra: 1 }],
        ['Authorize', { idToken: { idToken: { nested: true }, type: 'ISO14443' } }],
        ['MeterValues', { evseId: 1, meterValue: 'not a list' }],
      ];
      return sendFrames(t, calls.map(([a, p], i) => call(`s${i}`, a, p)), calls.length);
    },
  },
  {
    name: '2.0.1: 1,000 TransactionEvents in a burst',
    beside: '1,000 calls in a burst',
    port: 'ocpp',
    // Closed once 25 calls wait unanswered (as the 1.6 burst: the socket ends without a close frame, 1006).
    mustSee: /; closed 100[68]$/,
    async run(t) {
      const ts = new Date().toISOString();
      // Of a transaction the gateway does not know, without evse: answered, nothing stored (what is sent after the bound is not handled).
      const frames = Array.from({ length: 1_000 }, (_, i) => call(`b${i}`, 'TransactionEvent', { eventType: 'Updated', timestamp: ts, triggerReason: 'MeterValuePeriodic', seqNo: i, transactionInfo: { transactionId: 'flood' } }));
      return sendFrames(t, frames, 1_000, 60_000);
    },
  },
  {
    name: '2.0.1: a client that never reads its answers',
    beside: 'a client that never reads its answers',
    port: 'ocpp',
    mustSee: /closed by the gateway$/,
    run: (t) => neverReads(t, 20_000),
  },
];
