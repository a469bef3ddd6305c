// IEC 62056-21 mode C readout bytes (pure): the identification, the option select, the BCC, and
// the real recorded Itron EM214 readout (test/data/iec62056-21/itron_em214_mode_c.txt).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { interpretTelegram } from '../../src/p1/interpret.js';
import { blockCheck, dataBlock, ModeCExchange, modeCBaudRate, optionSelect, SIGN_ON, type ModeCStep } from '../../src/p1/mode-c.js';

const recorded = readFileSync(fileURLToPath(new URL('../data/iec62056-21/itron_em214_mode_c.txt', import.meta.url)), 'latin1');
const identification = recorded.slice(0, recorded.indexOf('\r\n') + 2);
const block = dataBlock(recorded.slice(identification.length).replace(/^\x02/, ''));

function run(...chunks: string[]): ModeCStep[] {
  const exchange = new ModeCExchange();
  return chunks.flatMap((c) => exchange.push(c));
}

describe('IEC 62056-21 mode C', () => {
  it('sign-on, the rates of the baud characters, the option select for a data readout', () => {
    expect(SIGN_ON).toBe('/?!\r\n');
    expect(['0', '1', '2', '3', '4', '5', '6'].map(modeCBaudRate)).toEqual([300, 600, 1200, 2400, 4800, 9600, 19200]);
    expect(modeCBaudRate('A')).toBeNull(); // mode B's characters
    expect(optionSelect('5')).toBe('\x06050\r\n');
  });

  it('the BCC is the XOR of the bytes after STX up to and including ETX (values as pwitab/iec62056-21 computes them)', () => {
    expect(blockCheck('3:171.0(0)\x03')).toBe(0x12);
    expect(blockCheck('3:14(314*kWh)4:15(415*kWh)\r\n!\r\n\x03')).toBe('"'.charCodeAt(0));
  });

  it('the recorded EM214 readout: identification (its echoed request skipped), then the block; the telegram reads as the meter sent it', () => {
    const steps = run(`${SIGN_ON}${identification}`, optionSelect('5'), block);
    expect(steps[0]).toEqual({ kind: 'identified', identification: '/ITR5EM214', baudChar: '5', baudRate: 9600 });
    expect(steps[1]!.kind).toBe('readout');
    const outcome = interpretTelegram((steps[1] as { telegram: string }).telegram);
    expect(outcome.kind).toBe('ok');
    if (outcome.kind !== 'ok') return;
    expect(outcome.reading.metrics).toEqual([
      { name: 'total_active_power', value: 490, unit: 'W' },
      { name: 'active_energy_import', value: 22_108_700, unit: 'Wh' },
      { name: 'active_energy_export', value: 10_452_000, unit: 'Wh' },
      { name: 'current_l1', value: 0.8, unit: 'A' },
      { name: 'current_l2', value: 0.7, unit: 'A' },
      { name: 'current_l3', value: 1.2, unit: 'A' },
    ]);
    expect(outcome.identity).toMatchObject({ vendor: 'Itron', model: 'EM214', meterId: '1240007670003202', firmware: 'V01.69#EEA3546C' });
    // Byte by byte, the same.
    expect(run(...[...`${identification}${block}`])).toEqual(steps);
  });

  it('every single-bit error in the data block, its ETX or its BCC is refused: never a readout', () => {
    const start = identification.length + 1; // after the STX
    const whole = `${identification}${block}`;
    let refused = 0;
    for (let i = start; i < whole.length; i++) {
      for (let bit = 0; bit < 7; bit++) {
        const damaged = whole.slice(0, i) + String.fromCharCode(whole.charCodeAt(i) ^ (1 << bit)) + whole.slice(i + 1);
        const steps = run(damaged);
        expect(steps.some((s) => s.kind === 'readout'), `byte ${i} bit ${bit}`).toBe(false);
        if (steps.some((s) => s.kind === 'failed' && s.reason === 'bcc')) refused++;
      }
    }
    // Most are caught by the BCC at once; the rest (an ETX hit) wait for the readout's timeout.
    expect(refused).toBeGreaterThan((whole.length - start) * 7 * 0.9);
  });

  it('a mode A or B identification, or no identification at all, is not a mode C readout', () => {
    expect(run('/LGZ4ZMF100AC.M26\r\n')).toEqual([{ kind: 'identified', identification: '/LGZ4ZMF100AC.M26', baudChar: '4', baudRate: 4800 }]);
    expect(run('/ABCEmeter\r\n')).toEqual([{ kind: 'failed', reason: 'garbled', detail: expect.stringMatching(/proposes no mode C rate .*mode A or B meter/) }]);
    expect(run(`${'x'.repeat(100)}`)).toEqual([{ kind: 'failed', reason: 'garbled', detail: 'no identification line, 100 bytes' }]);
  });
});
