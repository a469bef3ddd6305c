// The GPIO control signal (grid/gpio-signal.ts) behind the grid control (grid/grid-control.ts).
// The kernel's gpio-sim is not available here (no /sys/kernel/config, no kernel modules, no
// /dev/gpiochip*), so the reader is tested at its own boundary, the libgpiod 1.6 tools:
// - the real gpioget (Debian package gpiod) on a chip that does not exist: the signal is lost
//   and, on_signal_lost dim, the site is dimmed to P_min,14a with cause signal-lost;
// - stand-ins of gpioget/gpiomon (test/helpers/gpiod-standin/) that print exactly what the
//   real tools print (gpioget: "1 0"; gpiomon -F '%o %e': "<offset> <1|0>", as the installed
//   gpiomon --help documents) from files per line: two contacts, active low, the FNN two-relay
//   patterns, a bounce shorter than the debounce ignored, gpiomon exiting (the chip gone) is a
//   lost signal, dimmed, and the reader starts again by itself once the chip is back.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { createContext } from '../../src/daemon.js';
import { GridControl } from '../../src/grid/grid-control.js';
import { gridCheck } from '../../src/ops/doctor/grid.js';
import { controlSignalTypes } from '../../src/grid/index.js';
import { createLogger } from '../../src/log.js';
import { DimmingStore } from '../../src/store/grid-dimming.js';
import { hasGpiod } from '../helpers/peers.js';
import { until } from '../helpers/wait.js';

const STANDIN = join(__dirname, '../helpers/gpiod-standin');
const DEBOUNCE_MS = 600;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function startControl(input: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'mg-gpio-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const config = validateConfig(
    {
      organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
      data_dir: join(dir, 'data'),
      chargers: [{ id: 'CP-A', password: 'charger-secret-0123456789', auth: 'accept_all', connectors: [{ connector_id: 1, default_target: { departure_local_time: '18:00', energy_wh: 30000 } }] }],
      grid_control: { input: { type: 'gpio', ...input }, ...extra },
    },
    'test',
    {},
  );
  const ctx = createContext(config, { logger: createLogger('fatal') });
  const settings = config.grid_control!;
  const source = (await controlSignalTypes().forType('gpio')!.load())({ config, input: settings.input, logger: ctx.logger, now: () => Date.now() });
  const control = new GridControl(ctx, { source, fuseConnectors: () => [], chargePoints: 1 });
  cleanups.push(async () => {
    await control.stop();
    ctx.db.close();
  });
  await control.start();
  return { control, store: new DimmingStore(ctx.db), dir };
}

describe('the GPIO control signal', () => {
  it.skipIf(!hasGpiod())('the real gpioget on a chip that is not there: the signal is lost and the site dimmed', { timeout: 20_000 }, async () => {
    const { control, store } = await startControl({ chip: 'gpiochip99', lines: [17] });
    await until(() => control.view().signal === 'lost', 'the signal lost');
    expect(control.view().signal_reason).toMatch(/gpioget gpiochip99 17: gpioget: error reading GPIO values/);
    expect(control.view()).toMatchObject({ dimmed: true, limit_w: 4200, on_signal_lost: 'dim' });
    expect(store.between(0, Date.now() + 1, 10)).toMatchObject([{ cause: 'signal-lost', limitW: 4200, contacts: null }]);
  });

  it.skipIf(!hasGpiod())('hold-last with nothing read since the start has no state to hold: dimmed too', { timeout: 20_000 }, async () => {
    const { control } = await startControl({ chip: 'gpiochip98', lines: [4] }, { on_signal_lost: 'hold-last' });
    await until(() => control.view().signal === 'lost', 'the signal lost');
    expect(control.view()).toMatchObject({ dimmed: true, limit_w: 4200, on_signal_lost: 'hold-last' });
  });

  it('two contacts, active low, FNN patterns: debounced, a bounce ignored, the chip gone and back', { timeout: 30_000 }, async () => {
    const chips = mkdtempSync(join(tmpdir(), 'mg-gpio-chips-'));
    cleanups.push(() => rmSync(chips, { recursive: true, force: true }));
    process.env.GPIO_STANDIN_DIR = chips;
    const chip = join(chips, 'gpiochip0');
    const line = (offset: number, v: 0 | 1) => writeFileSync(join(chip, String(offset)), String(v));
    mkdirSync(chip);
    // Active low: a closed contact pulls the line to 0. Both open.
    line(17, 1);
    line(27, 1);
    const { control, store } = await startControl(
      { chip: 'gpiochip0', lines: [17, 27], active: 'low', debounce_ms: DEBOUNCE_MS, gpioget: join(STANDIN, 'gpioget'), gpiomon: join(STANDIN, 'gpiomon') },
      {
        patterns: [
          { contacts: [false, false], limit: 'none' },
          { contacts: [true, false], limit: 'minimum' },
          { contacts: [false, true], limit: { power_kw: 0 } },
        ],
      },
    );
    await until(() => control.view().signal === 'read', 'the lines read');
    expect(control.view()).toMatchObject({ dimmed: false, contacts: [false, false] });

    // A bounce: closed for less than the debounce, then open again. Nothing happens. (The
    // debounce runs in this process and gpiomon's stand-in is polled: a 40 ms bounce against a
    // 600 ms debounce leaves a loaded machine room; looked at once the debounce has passed.)
    line(17, 0);
    await new Promise((r) => setTimeout(r, 40));
    line(17, 1);
    await new Promise((r) => setTimeout(r, DEBOUNCE_MS + 250));
    expect(control.view().dimmed).toBe(false);
    expect(store.between(0, Date.now() + 1, 10)).toHaveLength(0);

    // Contact 1 closes and holds: dimmed to P_min,14a after the debounce.
    line(17, 0);
    await until(() => control.view().dimmed, 'dimmed');
    expect(control.view()).toMatchObject({ limit_w: 4200, contacts: [true, false] });

    // The other pattern: contact 2 only, 0 kW.
    line(17, 1);
    line(27, 0);
    await until(() => control.view().limit_w === 0, 'the 0 kW pattern');
    expect(control.view().contacts).toEqual([false, true]);

    // The chip goes away: gpiomon exits, the signal is lost, dimmed to P_min,14a.
    rmSync(chip, { recursive: true, force: true });
    await until(() => control.view().signal === 'lost', 'the signal lost');
    expect(control.view()).toMatchObject({ dimmed: true, limit_w: 4200 });
    expect(control.view().signal_reason).toMatch(/gpiomon exited|gpioget/);

    // It comes back with both contacts open: read again by itself, not dimmed.
    mkdirSync(chip);
    line(17, 1);
    line(27, 1);
    await until(() => control.view().signal === 'read' && !control.view().dimmed, 'read again, released');
    const events = store.between(0, Date.now() + 1, 10);
    expect(events.map((e) => [e.cause, e.limitW, e.endedAtMs !== null])).toEqual([
      ['signal', 4200, true],
      ['signal', 0, true],
      ['signal-lost', 4200, true],
    ]);
  });

  it('doctor reads the input once when no daemon answers: what the contacts mean, or the fix', { timeout: 20_000 }, async () => {
    const chips = mkdtempSync(join(tmpdir(), 'mg-gpio-chips-'));
    cleanups.push(() => rmSync(chips, { recursive: true, force: true }));
    process.env.GPIO_STANDIN_DIR = chips;
    mkdirSync(join(chips, 'gpiochip0'));
    writeFileSync(join(chips, 'gpiochip0', '17'), '1');
    const doctor = async (input: Record<string, unknown>) => {
      const config = validateConfig(
        {
          organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
          data_dir: join(chips, 'data'),
          http: { enabled: false },
          chargers: [{ id: 'CP-A', password: 'charger-secret-0123456789', auth: 'accept_all', connectors: [{ connector_id: 1, default_target: { departure_local_time: '18:00', energy_wh: 30000 } }] }],
          grid_control: { input: { type: 'gpio', ...input } },
        },
        'test',
        {},
      );
      return gridCheck.run({ configPath: 'test', config, configProblems: [], now: () => Date.now(), timeoutMs: 3000, serviceUser: 'root', results: [] });
    };
    expect(await doctor({ chip: 'gpiochip0', lines: [17], gpioget: join(STANDIN, 'gpioget'), gpiomon: join(STANDIN, 'gpiomon') })).toEqual([
      { check: 'grid control', status: 'pass', detail: 'gpio gpiochip0 line(s) 17 (active high): contacts closed = dimmed to P_min,14a' },
    ]);
    if (hasGpiod()) {
      const [missing] = await doctor({ chip: 'gpiochip99', lines: [17] });
      expect(missing).toMatchObject({ status: 'fail', detail: expect.stringMatching(/gpioget gpiochip99 17: .*on_signal_lost dim/), fix: expect.stringMatching(/gpioinfo/) });
    }
  });
});
