// Meter register maps checked against something other than themselves: raw words from vendor
// documents and published captures (test/golden/*.json, each frame citing its source) decoded
// with the built-in profile must give the values the source states.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeValue, registerCount } from '../../src/modbus/decode.js';
import { builtInProfiles } from '../../src/modbus/profiles/index.js';

interface GoldenExpect {
  readonly metric: string;
  /** As the source states it; its decimals give the tolerance. */
  readonly value: string;
  readonly unit: string;
}
interface GoldenFrame {
  readonly source: string;
  readonly url: string;
  readonly function_code: 3 | 4;
  readonly address: string;
  readonly words: string[];
  readonly expect: GoldenExpect[];
}
interface GoldenFile {
  readonly profile: string;
  readonly missing?: string;
  readonly frames: GoldenFrame[];
}

const dir = fileURLToPath(new URL('../golden/', import.meta.url));
const files: GoldenFile[] = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(readFileSync(`${dir}${f}`, 'utf8')) as GoldenFile);

/** Source unit -> our metric unit. */
const TO_OUR_UNIT: Record<string, { unit: string; factor: number }> = {
  V: { unit: 'V', factor: 1 },
  A: { unit: 'A', factor: 1 },
  W: { unit: 'W', factor: 1 },
  kW: { unit: 'W', factor: 1000 },
  Wh: { unit: 'Wh', factor: 1 },
  kWh: { unit: 'Wh', factor: 1000 },
  Hz: { unit: 'Hz', factor: 1 },
  '1': { unit: '1', factor: 1 },
};

/** Half of the last stated digit: "8567.20" -> 0.005. */
function statedTolerance(value: string): number {
  const decimals = value.includes('.') ? value.split('.')[1].length : 0;
  return 0.5 * 10 ** -decimals;
}

describe('golden frames from vendor documents and captures', () => {
  it('every built-in profile has a golden file, and every file names a built-in profile', () => {
    expect(files.map((f) => f.profile).sort()).toEqual(Object.keys(builtInProfiles).sort());
  });

  for (const file of files) {
    const profile = builtInProfiles[file.profile];
    if (file.frames.length === 0) {
      it.todo(`${file.profile}: no citable golden frame — ${file.missing ?? '(reason missing)'}`);
      continue;
    }
    describe(file.profile, () => {
      file.frames.forEach((frame, i) => {
        it(`frame ${i + 1} (${frame.url.split(' ')[0]}) decodes to the stated values`, () => {
          expect(frame.source.length).toBeGreaterThan(40);
          expect(frame.url).toMatch(/^https:\/\//);
          expect(profile.function_code).toBe(frame.function_code);
          const words = frame.words.map((w) => Number.parseInt(w, 16));
          const start = Number.parseInt(frame.address, 16);
          expect(frame.expect.length).toBeGreaterThan(0);
          for (const want of frame.expect) {
            const spec = profile.registers.find((r) => r.metric === want.metric);
            expect(spec, `${file.profile} has no register for ${want.metric}`).toBeDefined();
            const offset = spec!.address - start;
            expect(offset, `${want.metric} at 0x${spec!.address.toString(16)} lies outside the frame`).toBeGreaterThanOrEqual(0);
            expect(offset + registerCount(spec!.type)).toBeLessThanOrEqual(words.length);
            const conversion = TO_OUR_UNIT[want.unit];
            expect(conversion, `unknown unit ${want.unit}`).toBeDefined();
            expect(spec!.unit).toBe(conversion.unit);
            const decoded = decodeValue(words, offset, spec!);
            expect(decoded, `${want.metric} decoded as "no value"`).not.toBeNull();
            const stated = Number(want.value) * conversion.factor;
            const tolerance = statedTolerance(want.value) * conversion.factor;
            expect(Math.abs(decoded! - stated), `${want.metric}: decoded ${decoded}, source says ${want.value} ${want.unit}`).toBeLessThanOrEqual(tolerance + 1e-9);
          }
        });
      });
    });
  }
});
