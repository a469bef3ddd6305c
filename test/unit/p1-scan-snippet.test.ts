// What `metergate scan --p1` prints to paste for a smart meter that relays M-Bus devices:
// real recorded telegrams (../shared/data/dsmr, read in place) through the framer the scan
// listens with, their channels as scan finds them, the snippet parsed and validated. A
// channel with a reading is listed under `channels:` (each a resource of its own, else it
// is never published); one without is there commented out with why.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { validateConfig } from '../../src/config/load.js';
import type { ListenResult } from '../../src/p1/listen.js';
import type { P1Line } from '../../src/p1/line-settings.js';
import { mbusChannels } from '../../src/p1/mbus.js';
import { telegramReader } from '../../src/p1/reader.js';
import { p1ConfigSnippet } from '../../src/p1/snippet.js';
import { describeWithSharedData, sharedData } from '../helpers/shared-data.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';

/** The scan's result for a recorded telegram heard at `line`. */
function heard(file: string, line: P1Line = '115200 8N1'): ListenResult {
  const events = telegramReader(line).push(readFileSync(sharedData(`dsmr/${file}`), 'latin1'));
  const whole = events.find((e) => e.kind === 'whole');
  if (!whole || whole.kind !== 'whole' || whole.outcome.kind !== 'ok') throw new Error(`${file}: no whole telegram`);
  const { identity, reading, telegram } = whole.outcome;
  return { line, telegram: { identity, reading, crcChecked: whole.crcChecked, channels: mbusChannels(telegram, Date.now()) }, bytes: 1, drops: {}, unavailable: null, smlSeen: false };
}

/** Ids in order, so the test knows which went where. */
function ids() {
  let n = 0;
  return () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`;
}
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

describeWithSharedData('scan --p1 snippet of a meter with M-Bus channels', () => {
  it('the Fluvius meter with gas and water: both under channels:, and the config makes each a resource', () => {
    const text = p1ConfigSnippet(heard('fluvius_v171.txt'), { type: 'p1', port: '/dev/ttyUSB0' }, ids(), 'smart-meter');
    expect(text).toContain(`      1: ${id(2)}  # replace with this channel's resource id; gas (device type 3), id 7FLO2119033733, reads gas_volume 112.384 m3`);
    expect(text).toContain(`      2: ${id(3)}  # replace with this channel's resource id; water (device type 7), id 8SAG1234567890, reads water_volume 872.234 m3`);
    const doc = parse(text) as { buses: unknown[]; meters: Array<{ resource_id: string; channels: Record<string, string> }> };
    expect(doc.meters).toEqual([{ resource_id: id(1), bus: 'smart-meter', channels: { 1: id(2), 2: id(3) } }]);
    const config = validateConfig({ organization_id: ORG, ...doc }, 'snippet', {});
    expect(config.meters.map((m) => [m.resource_id, m.profile, m.unit_id])).toEqual([
      [id(1), 'dsmr', 1],
      [id(2), 'dsmr-mbus', 1],
      [id(3), 'dsmr-mbus', 2],
    ]);
  });

  it('the DSMR 5 meter with two channels, one without a reading: that one commented out with why', () => {
    const text = p1ConfigSnippet(heard('v5_two_mbus.txt'), { type: 'p1', port: '/dev/ttyUSB0' }, ids());
    expect(text).toMatch(new RegExp(`^ {6}# 1: ${id(2)} {2}# gas \\(device type 3\\): unit null is not one of m3, m³; uncomment once it sends one$`, 'm'));
    expect(text).toContain(`      2: ${id(3)}  # replace with this channel's resource id; gas (device type 3), id G0039001936990619, reads gas_volume 246.138 m3`);
    const doc = parse(text) as { meters: Array<{ channels: Record<string, string> }> };
    expect(doc.meters[0]!.channels).toEqual({ 2: id(3) });
    expect(validateConfig({ organization_id: ORG, ...doc }, 'snippet', {}).meters.filter((m) => m.profile === 'dsmr-mbus').map((m) => m.unit_id)).toEqual([2]);
  });

  it('no channel with a reading: the whole channels block commented, the snippet still a valid config', () => {
    const result = heard('v5_two_mbus.txt');
    const none = { ...result, telegram: { ...result.telegram!, channels: result.telegram!.channels.filter((c) => c.reading === null) } };
    const text = p1ConfigSnippet(none, { type: 'p1', port: '/dev/ttyUSB0' }, ids());
    expect(text).toContain('    # channels:  # the M-Bus devices this meter relays');
    expect(text).toMatch(/^ {4}# {3}1: \S+ {2}# gas \(device type 3\): unit null/m);
    const doc = parse(text) as { meters: Array<Record<string, unknown>> };
    expect(doc.meters[0]).not.toHaveProperty('channels');
    validateConfig({ organization_id: ORG, ...doc }, 'snippet', {});
  });

  it('a meter without M-Bus devices: no channels at all', () => {
    const text = p1ConfigSnippet(heard('sagemcom_t210_d_r.txt'), { type: 'p1', port: '/dev/ttyUSB0' }, ids());
    expect(text).not.toContain('channels');
  });
});
