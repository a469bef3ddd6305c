// The operator operations (issue 22 item 1) against `metergate run` as its own process:
// real HTTP with cpo tokens, every answer checked against openapi.json, a strict ocpp-rpc
// charger (it validates every call the gateway sends against the official OCPP 1.6 schema
// and answers a CallError to one that fails) that records what it receives, and the
// `metergate charger` CLI as a process against the running daemon. The local authorization
// list is followed across a restart with changed id tags (differential, next version).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRPCError, RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/free-port.js';
import { databasePath, openDaemonDatabase } from '../../src/store/db.js';
import { TokenStore } from '../../src/store/tokens.js';
import { runCli } from '../helpers/cli-process.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { expectDocumented } from '../helpers/openapi.js';
import { until } from '../helpers/wait.js';
import { centralSystemConfigHead } from '../helpers/central-system-config.js';

type ClientOptions = ConstructorParameters<typeof RPCClient>[0];
type Json = Record<string, any>;
const PASSWORD = 'garage-key-0123456789';
const CP = 'CP-OPS-1';

/** `metergate <args>` from the sources through tsx. */
const cli = (args: string[], env: NodeJS.ProcessEnv) => runCli(args, env, 'source');

describe('operator operations: HTTP API and CLI against metergate run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metergate-ocpp-ops-'));
  const dataDir = join(dir, 'data');
  const configPath = join(dir, 'config.yaml');
  let daemon: DaemonProcess | undefined;
  let cpo = '';
  let cdrs = '';
  let httpPort = 0;
  let ocppPort = 0;
  const clients: RPCClient[] = [];
  /** Every call the charger received: [action, params]. */
  const received: Array<[string, Json]> = [];
  const configuration = new Map<string, string>([['HeartbeatInterval', '300']]);
  let listVersion = 0;
  const localList = new Map<string, string>();

  const writeConfig = (idTags: string[]) =>
    writeFileSync(
      configPath,
      [
        ...centralSystemConfigHead({ dataDir, httpPort, ocppPort, ocppSettings: 'operation_timeout_s: 8' }),
        'chargers:',
        `  - id: ${CP}`,
        `    password: ${PASSWORD}`,
        `    auth: { id_tags: [${idTags.join(', ')}] }`,
        '  - id: CP-LOOSE',
        `    password: ${PASSWORD}`,
        '    auth: accept_all',
        '  - id: CP-OFFLINE',
        `    password: ${PASSWORD}`,
        '    auth: accept_all',
        '',
      ].join('\n'),
    );

  const api = async (op: string, body?: unknown, opts: { token?: string; chargePointId?: string; raw?: string } = {}) => {
    const res = await fetch(`http://127.0.0.1:${httpPort}/api/v1/chargers/${opts.chargePointId ?? CP}/${op}`, {
      method: 'POST',
      headers: { ...(opts.token === '' ? {} : { authorization: `Token ${opts.token ?? cpo}` }), ...(body === undefined && opts.raw === undefined ? {} : { 'content-type': 'application/json' }) },
      body: opts.raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    const json = (await res.json()) as Json;
    expectDocumented('POST', `/api/v1/chargers/{charge_point_id}/${op}`, res, json);
    return { status: res.status, body: json };
  };

  /** A strict charger that answers each operator operation as a real one would, recording what it got. */
  const connect = async () => {
    const cp = new RPCClient({ endpoint: `ws://127.0.0.1:${ocppPort}`, identity: CP, password: PASSWORD, protocols: ['ocpp1.6'], strictMode: true, reconnect: false } as ClientOptions);
    const on = (action: string, answer: (p: Json) => unknown) =>
      cp.handle(action, async ({ params }: { params?: unknown }) => {
        received.push([action, params as Json]);
        return answer(params as Json) as Json;
      });
    on('RemoteStartTransaction', () => ({ status: 'Accepted' }));
    on('RemoteStopTransaction', (p) => ({ status: p.transactionId === 7 ? 'Accepted' : 'Rejected' }));
    on('Reset', () => ({ status: 'Accepted' }));
    on('UnlockConnector', (p) => {
      if (p.connectorId === 2) throw createRPCError('NotSupported', 'connector 2 has a fixed cable', { connectorId: 2 });
      return { status: 'Unlocked' };
    });
    on('ChangeAvailability', () => ({ status: 'Accepted' }));
    // DiagnosticsStatusNotification: a charger that never answers.
    on('TriggerMessage', (p) => (p.requestedMessage === 'DiagnosticsStatusNotification' ? new Promise(() => undefined) : { status: 'Accepted' }));
    on('ChangeConfiguration', (p) => {
      if (!configuration.has(p.key)) return { status: 'NotSupported' };
      configuration.set(p.key, p.value);
      return { status: 'Accepted' };
    });
    on('GetConfiguration', (p) => {
      const keys: string[] = p.key ?? [...configuration.keys()];
      return { configurationKey: keys.filter((k) => configuration.has(k)).map((key) => ({ key, readonly: false, value: configuration.get(key) })), unknownKey: keys.filter((k) => !configuration.has(k)) };
    });
    on('ClearCache', () => ({ status: 'Accepted' }));
    on('DataTransfer', (p) => (p.vendorId === 'com.acme' ? { status: 'Accepted', data: `echo:${p.data ?? ''}` } : { status: 'UnknownVendorId' }));
    on('SendLocalList', (p) => {
      if (p.updateType === 'Full') localList.clear();
      for (const e of p.localAuthorizationList ?? []) {
        if (e.idTagInfo) localList.set(e.idTag, e.idTagInfo.status);
        else localList.delete(e.idTag);
      }
      listVersion = p.listVersion;
      return { status: 'Accepted' };
    });
    on('GetLocalListVersion', () => ({ listVersion }));
    await cp.connect();
    clients.push(cp);
    return cp;
  };

  beforeAll(async () => {
    mkdirSync(dataDir);
    const db = openDaemonDatabase(databasePath(dataDir));
    const tokens = new TokenStore(db);
    cpo = tokens.create({ name: 'operator', type: 'cpo', nowMs: Date.now() }).token;
    cdrs = tokens.create({ name: 'platform', type: 'cdrs', nowMs: Date.now() }).token;
    db.close();
    [ocppPort, httpPort] = [await freePort(), await freePort()];
    writeConfig(['04A1B2C3D4', 'AABBCCDD']);
    daemon = await startDaemon(configPath, { startTimeoutMs: 120_000 });
  }, 180_000);

  afterAll(async () => {
    for (const c of clients) await c.close({ force: true }).catch(() => undefined);
    await daemon?.kill9();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses at once what it cannot send: unknown or disconnected charger, bad token, bad body', { timeout: 120_000 }, async () => {
    expect((await api('reset', { type: 'Soft' }, { chargePointId: 'CP-NOPE' })).status).toBe(404);
    const offline = await api('reset', { type: 'Soft' }, { chargePointId: 'CP-OFFLINE' });
    expect(offline.status).toBe(409);
    expect(offline.body.detail).toContain('not connected');
    expect((await api('reset', { type: 'Soft' }, { token: '' })).status).toBe(401);
    expect((await api('reset', { type: 'Soft' }, { token: cdrs })).status).toBe(403);
    const bad = await api('reset', { type: 'Medium' });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([{ path: 'type', message: 'must be one of "Soft", "Hard"' }]);
    expect((await api('reset', undefined, { raw: '{"type":' })).status).toBe(400);
    expect((await api('unlock-connector', { connector_id: 1, extra: true })).status).toBe(422);
    // No body where none is needed.
    expect((await api('clear-cache', undefined, { chargePointId: 'CP-OFFLINE' })).status).toBe(409);
  });

  it('sends each operation to the connected charger and returns its answer', { timeout: 240_000 }, async () => {
    const cp = await connect();
    expect(await cp.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single', firmwareVersion: '6.1.0' })).toMatchObject({ status: 'Accepted' });
    // After the boot: the configured id tags as its local list, version 1, in full.
    await until(() => received.some(([a]) => a === 'SendLocalList'), 'SendLocalList after the boot', 60_000);
    expect(received.find(([a]) => a === 'SendLocalList')![1]).toEqual({
      listVersion: 1,
      updateType: 'Full',
      localAuthorizationList: [
        { idTag: '04A1B2C3D4', idTagInfo: { status: 'Accepted' } },
        { idTag: 'AABBCCDD', idTagInfo: { status: 'Accepted' } },
      ],
    });

    const start = await api('remote-start', { id_tag: '04A1B2C3D4', connector_id: 1 });
    expect(start.status).toBe(200);
    expect(start.body).toEqual({ charge_point_id: CP, action: 'RemoteStartTransaction', request: { idTag: '04A1B2C3D4', connectorId: 1 }, answer: { status: 'Accepted' } });
    // The operation's own call (answered, so received): not whatever the gateway sent last on its own.
    const lastOf = (action: string) => received.filter(([a]) => a === action).at(-1);
    expect(lastOf('RemoteStartTransaction')).toEqual(['RemoteStartTransaction', { idTag: '04A1B2C3D4', connectorId: 1 }]);

    expect((await api('remote-stop', { transaction_id: 7 })).body.answer).toEqual({ status: 'Accepted' });
    expect((await api('remote-stop', { transaction_id: 8 })).body.answer).toEqual({ status: 'Rejected' });
    expect((await api('reset', { type: 'Hard' })).body.answer).toEqual({ status: 'Accepted' });
    expect(lastOf('Reset')).toEqual(['Reset', { type: 'Hard' }]);
    expect((await api('unlock-connector', { connector_id: 1 })).body.answer).toEqual({ status: 'Unlocked' });
    expect((await api('change-availability', { type: 'Inoperative' })).body.request).toEqual({ connectorId: 0, type: 'Inoperative' });
    expect((await api('change-availability', { connector_id: 1, type: 'Operative' })).body.answer).toEqual({ status: 'Accepted' });
    expect((await api('trigger-message', { requested_message: 'StatusNotification', connector_id: 1 })).body.request).toEqual({ requestedMessage: 'StatusNotification', connectorId: 1 });
    expect((await api('change-configuration', { key: 'HeartbeatInterval', value: '120' })).body.answer).toEqual({ status: 'Accepted' });
    expect((await api('change-configuration', { key: 'NoSuchKey', value: '1' })).body.answer).toEqual({ status: 'NotSupported' });
    const read = await api('get-configuration', { keys: ['HeartbeatInterval', 'NoSuchKey'] });
    expect(read.body.answer).toEqual({ configurationKey: [{ key: 'HeartbeatInterval', readonly: false, value: '120' }], unknownKey: ['NoSuchKey'] });
    expect((await api('clear-cache')).body.answer).toEqual({ status: 'Accepted' });
    expect((await api('data-transfer', { vendor_id: 'com.acme', message_id: 'Echo', data: 'hi' })).body.answer).toEqual({ status: 'Accepted', data: 'echo:hi' });
    expect((await api('data-transfer', { vendor_id: 'org.other' })).body.answer).toEqual({ status: 'UnknownVendorId' });
    const version = await api('get-local-list-version', {});
    expect(version.body).toMatchObject({ answer: { listVersion: 1 }, list_version_held: 1 });
    // In step: nothing to send; Full sends it again as the next version.
    expect((await api('send-local-list', {})).body).toMatchObject({ request: null, answer: null, list_version_held: 1 });
    const full = await api('send-local-list', { update_type: 'Full' });
    expect(full.body).toMatchObject({ request: { listVersion: 2, updateType: 'Full' }, answer: { status: 'Accepted' }, list_version_held: 2 });
    expect((await api('send-local-list', {}, { chargePointId: 'CP-OFFLINE' })).status).toBe(409);

    // The charger's CallError, as it came.
    const refused = await api('unlock-connector', { connector_id: 2 });
    expect(refused.status).toBe(502);
    expect(refused.body.ocpp_error).toEqual({ code: 'NotSupported', description: 'connector 2 has a fixed cable', details: { connectorId: 2 } });
    // A charger that does not answer: 504 after ocpp.operation_timeout_s, and the next call goes through.
    const silent = await api('trigger-message', { requested_message: 'DiagnosticsStatusNotification' });
    expect(silent.status).toBe(504);
    expect((await api('trigger-message', { requested_message: 'Heartbeat' })).body.answer).toEqual({ status: 'Accepted' });

    // A charger (not strict itself) whose answer is not an OCPP 1.6 answer: 502, not taken for its CallError.
    const loose = new RPCClient({ endpoint: `ws://127.0.0.1:${ocppPort}`, identity: 'CP-LOOSE', password: PASSWORD, protocols: ['ocpp1.6'], strictMode: false, reconnect: false } as ClientOptions);
    loose.handle('ClearCache', async () => ({ status: 'Maybe' }));
    await loose.connect();
    clients.push(loose);
    await loose.call('BootNotification', { chargePointVendor: 'Loose', chargePointModel: 'L1' });
    const garbled = await api('clear-cache', {}, { chargePointId: 'CP-LOOSE' });
    expect(garbled.status).toBe(502);
    expect(garbled.body.detail).toContain('not an OCPP 1.6 ClearCache answer');
    expect(garbled.body.ocpp_error).toBeUndefined();

    // DataTransfer from the charger: another vendor gets UnknownVendorId; ours knows Ping.
    expect(await cp.call('DataTransfer', { vendorId: 'com.acme', messageId: 'Hello' })).toEqual({ status: 'UnknownVendorId' });
    expect(await cp.call('DataTransfer', { vendorId: 'metergate', messageId: 'Ping' })).toEqual({ status: 'Accepted', data: 'Pong' });
    expect(await cp.call('DataTransfer', { vendorId: 'metergate', messageId: 'Other' })).toEqual({ status: 'UnknownMessageId' });

    const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
    expect(metrics).toMatch(/metergate_ocpp_operations_total\{action="UnlockConnector",outcome="call-error"\} 1/);
    expect(metrics).toMatch(/metergate_ocpp_operations_total\{action="TriggerMessage",outcome="timeout"\} 1/);
  });

  it('metergate charger works against the running daemon', { timeout: 240_000 }, async () => {
    const env = { MG_TOKEN: cpo };
    const reset = await cli(['charger', 'reset', CP, '--config', configPath], env);
    expect(reset.code, reset.stderr).toBe(0);
    expect(JSON.parse(reset.stdout)).toEqual({ charge_point_id: CP, action: 'Reset', request: { type: 'Soft' }, answer: { status: 'Accepted' } });
    const offline = await cli(['charger', 'unlock-connector', 'CP-OFFLINE', '--connector', '1', '--config', configPath], env);
    expect(offline.code).toBe(1);
    expect(offline.stderr).toContain('not connected');
    const noToken = await cli(['charger', 'clear-cache', CP, '--config', configPath], { MG_TOKEN: '' });
    expect(noToken.code).toBe(64);
    expect(noToken.stderr).toContain('MG_TOKEN');
  });

  it('keeps the local list version across a restart and sends changed id tags as a differential update when the charger reconnects', { timeout: 240_000 }, async () => {
    for (const c of clients.splice(0)) await c.close({ force: true });
    await daemon!.stop();
    writeConfig(['04A1B2C3D4', 'EEFF0011']);
    daemon = await startDaemon(configPath, { startTimeoutMs: 120_000 });
    const before = received.length;
    // It only reconnects (no BootNotification), as many chargers do after the gateway restarted.
    await connect();
    await until(() => received.slice(before).some(([a]) => a === 'SendLocalList'), 'SendLocalList after the reconnect', 60_000);
    expect(received.slice(before).find(([a]) => a === 'SendLocalList')![1]).toEqual({
      listVersion: 3,
      updateType: 'Differential',
      localAuthorizationList: [{ idTag: 'EEFF0011', idTagInfo: { status: 'Accepted' } }, { idTag: 'AABBCCDD' }],
    });
    await until(async () => (await api('get-local-list-version', {})).body.list_version_held === 3, 'version 3 stored', 60_000);
    expect([...localList.keys()].sort()).toEqual(['04A1B2C3D4', 'EEFF0011']);
    expect(daemon!.output()).not.toContain(cpo);
  });
});
