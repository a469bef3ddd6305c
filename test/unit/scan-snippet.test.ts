import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { bestResult, configSnippet, type ScanResult } from '../../src/modbus/scan.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
const at = (baudRate: number, parity: 'even' | 'none' | 'odd', ids: number[]): ScanResult => ({
  settings: { baudRate, parity, stopBits: 1, dataBits: 8 },
  devices: ids.map((unitId) => ({ unitId, profile: 'sdm630', identifiedBy: 'model-code' as const, modelCode: 112 })),
  elapsedMs: 1000,
});

describe('scan config snippet', () => {
  it('configures one bus: the setting most meters answered at, first on a tie', () => {
    expect(bestResult([at(9600, 'even', [1]), at(19200, 'even', [2, 3])])?.settings.baudRate).toBe(19200);
    expect(bestResult([at(9600, 'even', [1]), at(9600, 'none', [1])])?.settings.parity).toBe('even');
    expect(bestResult([at(9600, 'even', [])])).toBeNull();
  });

  it('names meters that answered only at another setting in a comment, and still validates', () => {
    const text = configSnippet([at(9600, 'even', [1, 2]), at(9600, 'none', [1, 2]), at(19200, 'even', [5])], '/dev/ttyUSB0', 'rs485-2');
    expect(text).toContain('# Also answered at 19200 baud, parity even, 1 stop bit: unit(s) 5.');
    expect(text).not.toContain('parity none, 1 stop bit: unit'); // same meters, not news
    const snippet = parse(text) as { buses: Array<{ name: string; baud_rate: number; parity: string }>; meters: Array<{ unit_id: number; bus: string }> };
    expect(snippet.buses).toHaveLength(1);
    expect(snippet.buses[0]).toMatchObject({ name: 'rs485-2', baud_rate: 9600, parity: 'even' });
    expect(snippet.meters.map((m) => [m.unit_id, m.bus])).toEqual([[1, 'rs485-2'], [2, 'rs485-2']]);
    validateConfig({ organization_id: ORG, ...snippet }, 'snippet', {});
  });
});
