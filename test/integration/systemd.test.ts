import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { Liveness } from '../../src/ops/systemd/liveness.js';
import { SystemdNotifier } from '../../src/ops/systemd/systemd-notify.js';
import { SystemdWatchdog } from '../../src/ops/systemd/watchdog.js';
import { hasPython3, hasSystemdNotify, startNotifySocket } from '../helpers/notify-socket.js';
import { systemdAnalyzeFound } from '../helpers/peers.js';
import { until } from '../helpers/wait.js';
import { PACKAGE_NODE, verifyUnit } from '../helpers/unit-file.js';

const UNIT = 'systemd/metergate.service';
const hasSystemdAnalyze = systemdAnalyzeFound();
if (!hasSystemdNotify || !hasPython3) console.warn('systemd-notify or python3 not found: skipping sd_notify protocol tests');

const silent = createLogger('silent');

describe.skipIf(!hasSystemdAnalyze)('systemd unit file', () => {
  it('passes systemd-analyze verify without a single warning', () => {
    const r = verifyUnit(UNIT);
    expect(r.complaints).toEqual([]);
    expect(r.status, r.stderr).toBe(0);
  });

  it("runs the package's own Node", async () => {
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(UNIT, 'utf8')).toMatch(new RegExp(`^ExecStart=${PACKAGE_NODE} `, 'm'));
  });

  it('is sandboxed: systemd-analyze security rates the exposure at most 3.0 (of 10)', () => {
    const r = spawnSync('systemd-analyze', ['security', '--offline=yes', '--no-pager', UNIT], { encoding: 'utf8' });
    const m = /Overall exposure level for metergate\.service: (\d+\.\d)/.exec(r.stdout + r.stderr);
    expect(m, r.stdout + r.stderr).not.toBeNull();
    expect(Number(m![1])).toBeLessThanOrEqual(3.0);
  });

  it('keeps MemoryDenyWriteExecute off (V8 JIT) and the serial devices reachable', async () => {
    const { readFileSync } = await import('node:fs');
    const text = readFileSync(UNIT, 'utf8');
    const active = text.split('\n').filter((l) => !l.startsWith('#'));
    expect(active.some((l) => l.startsWith('MemoryDenyWriteExecute='))).toBe(false);
    for (const line of ['Type=notify', 'Restart=always', 'StateDirectory=metergate', 'SupplementaryGroups=dialout', 'ProtectSystem=strict', 'NoNewPrivileges=yes', 'PrivateTmp=yes', 'DeviceAllow=char-ttyUSB rw']) {
      expect(active).toContain(line);
    }
    expect(active.find((l) => l.startsWith('WatchdogSec='))).toBeDefined();
  });
});

describe.skipIf(!hasSystemdNotify || !hasPython3)('sd_notify through systemd-notify', () => {
  it('delivers READY, STATUS, WATCHDOG and STOPPING, each confirmed by the barrier', async () => {
    const sock = await startNotifySocket();
    try {
      const notifier = new SystemdNotifier({ logger: silent, env: { ...process.env, NOTIFY_SOCKET: sock.path } });
      expect(await notifier.ready('running')).toBe(true);
      expect(await notifier.watchdog()).toBe(true);
      expect(await notifier.stopping()).toBe(true);
      expect(await sock.waitFor('READY=1')).toContain('STATUS=running');
      await sock.waitFor('WATCHDOG=1');
      await sock.waitFor('STOPPING=1');
      // Each message was followed by systemd-notify's barrier, which the manager closed. The
      // receiver records a barrier after closing it (what lets systemd-notify return): the
      // last one may reach us after STOPPING=1, so it is waited for.
      await until(() => sock.messages.filter((m) => m === 'BARRIER=1').length >= 3, 'the third barrier recorded');
      expect(sock.messages.filter((m) => m === 'BARRIER=1').length).toBe(3);
    } finally {
      await sock.close();
    }
  });

  it('is a no-op outside systemd', async () => {
    const notifier = new SystemdNotifier({ logger: silent, env: {} });
    expect(notifier.enabled).toBe(false);
    expect(await notifier.ready()).toBe(false);
    expect(notifier.watchdogIntervalMs()).toBeNull();
  });

  it('reads WatchdogSec from WATCHDOG_USEC and ignores a watchdog meant for another PID', () => {
    const env = { NOTIFY_SOCKET: '/x', WATCHDOG_USEC: '60000000' };
    expect(new SystemdNotifier({ logger: silent, env, pid: 42 }).watchdogIntervalMs()).toBe(60_000);
    expect(new SystemdNotifier({ logger: silent, env: { ...env, WATCHDOG_PID: '42' }, pid: 42 }).watchdogIntervalMs()).toBe(60_000);
    expect(new SystemdNotifier({ logger: silent, env: { ...env, WATCHDOG_PID: '43' }, pid: 42 }).watchdogIntervalMs()).toBeNull();
  });

  it('feeds the watchdog only while the poll and publish loops both tick', async () => {
    const sock = await startNotifySocket();
    let monoMs = 0;
    const liveness = new Liveness(() => monoMs);
    const notifier = new SystemdNotifier({ logger: silent, env: { ...process.env, NOTIFY_SOCKET: sock.path } });
    const watchdog = new SystemdWatchdog({ logger: silent, liveness, notifier });
    try {
      await watchdog.start();
      await sock.waitFor('READY=1');
      const poll = liveness.register('poll', 30_000);
      const publish = liveness.register('publish', 30_000);
      monoMs = 20_000;
      expect(await watchdog.ping()).toBe(true);
      monoMs = 40_000; // neither loop ticked for 40 s
      poll.tick();
      expect(await watchdog.ping()).toBe(false); // publish is stale
      publish.tick();
      expect(await watchdog.ping()).toBe(true);
      await watchdog.stop();
      await sock.waitFor('STOPPING=1');
      expect(sock.messages.filter((m) => m === 'WATCHDOG=1').length).toBe(2);
      expect(sock.messages.some((m) => m.includes('STATUS=stalled: publish'))).toBe(true);
    } finally {
      await sock.close();
    }
  });
});
